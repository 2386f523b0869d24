//! ML-DSA through aws-lc-rs's stable API (`aws_lc_rs::signature::PqdsaKeyPair`, 1.18.0 and
//! newer). Older releases keep ML-DSA behind their `unstable` feature, which this worker
//! does not enable (it changes how aws-lc-sys is built for every algorithm): built against
//! them (`crate:aws-lc-rs==1.17.0` in a bisect), the worker does not offer ML-DSA, and the
//! other algorithms are timed as usual. The build script sets `aws_lc_rs_stable_mldsa`.

use pqbench_stack_common::Alg;

#[cfg(aws_lc_rs_stable_mldsa)]
mod api {
    use aws_lc_rs::signature::VerificationAlgorithm;
    use aws_lc_rs::signature::{self, KeyPair, PqdsaKeyPair, PqdsaSigningAlgorithm};
    use pqbench_stack_common::Alg;

    pub const OFFERED: bool = true;

    /// A key pair as AWS-LC holds it (an EVP_PKEY with its seed and expanded key).
    pub struct Pair(PqdsaKeyPair);

    fn signing(alg: Alg) -> &'static PqdsaSigningAlgorithm {
        match alg {
            Alg::MlDsa44 => &signature::ML_DSA_44_SIGNING,
            Alg::MlDsa65 => &signature::ML_DSA_65_SIGNING,
            _ => &signature::ML_DSA_87_SIGNING,
        }
    }

    pub fn verification(alg: Alg) -> &'static dyn VerificationAlgorithm {
        match alg {
            Alg::MlDsa44 => &signature::ML_DSA_44,
            Alg::MlDsa65 => &signature::ML_DSA_65,
            _ => &signature::ML_DSA_87,
        }
    }

    pub fn generate(alg: Alg) -> Result<Pair, String> {
        PqdsaKeyPair::generate(signing(alg))
            .map(Pair)
            .map_err(|_| "key generation failed".into())
    }

    /// FIPS 204 ML-DSA.KeyGen_internal from the 32-byte seed xi.
    pub fn from_seed(alg: Alg, xi: &[u8]) -> Result<Pair, String> {
        PqdsaKeyPair::from_seed(signing(alg), xi)
            .map(Pair)
            .map_err(|e| format!("seed rejected: {e}"))
    }

    /// A FIPS 204 expanded secret key.
    pub fn from_expanded(alg: Alg, sk: &[u8]) -> Result<Pair, String> {
        PqdsaKeyPair::from_raw_private_key(signing(alg), sk)
            .map(Pair)
            .map_err(|e| format!("private key rejected: {e}"))
    }

    impl Pair {
        pub fn public(&self) -> Vec<u8> {
            self.0.public_key().as_ref().to_vec()
        }

        /// Signs (hedged: AWS-LC draws rnd) into `out`, which it sizes; the length written.
        pub fn sign_into(&self, message: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
            out.resize(self.0.algorithm().signature_len(), 0);
            self.0
                .sign(message, out)
                .map_err(|_| "signing failed".into())
        }
    }
}

#[cfg(not(aws_lc_rs_stable_mldsa))]
mod api {
    use aws_lc_rs::signature::VerificationAlgorithm;
    use pqbench_stack_common::Alg;

    pub const OFFERED: bool = false;

    /// No ML-DSA key can exist in this build.
    pub enum Pair {}

    const ABSENT: &str = "this aws-lc-rs has ML-DSA only behind its unstable feature";

    pub fn verification(_alg: Alg) -> &'static dyn VerificationAlgorithm {
        unreachable!("{ABSENT}")
    }

    pub fn generate(_alg: Alg) -> Result<Pair, String> {
        Err(ABSENT.into())
    }

    pub fn from_seed(_alg: Alg, _xi: &[u8]) -> Result<Pair, String> {
        Err(ABSENT.into())
    }

    pub fn from_expanded(_alg: Alg, _sk: &[u8]) -> Result<Pair, String> {
        Err(ABSENT.into())
    }

    impl Pair {
        pub fn public(&self) -> Vec<u8> {
            match *self {}
        }

        pub fn sign_into(&self, _message: &[u8], _out: &mut Vec<u8>) -> Result<usize, String> {
            match *self {}
        }
    }
}

pub use api::{from_expanded, from_seed, generate, verification, Pair, OFFERED};

pub fn is_mldsa(alg: Alg) -> bool {
    matches!(alg, Alg::MlDsa44 | Alg::MlDsa65 | Alg::MlDsa87)
}
