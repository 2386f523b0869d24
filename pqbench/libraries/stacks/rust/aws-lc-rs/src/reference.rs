//! A plain benchmark of aws-lc-rs's documented API, without the worker: the reference that
//! pqbench's fidelity benchmark pairs with the worker's rows.
//!
//! The arguments, the round and the output line are the common crate's
//! (`pqbench_stack_common::reference`): one call of the API per iteration, its result passed
//! to `black_box`. Inputs (keys, a ciphertext, one message and its signature) are made before
//! the loop, as the crate's own examples make them.

use std::process::ExitCode;

use aws_lc_rs::agreement::{self, ParsedPublicKey as PeerKey, UnparsedPublicKey};
use aws_lc_rs::kem::{self, Ciphertext, DecapsulationKey};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, ParsedPublicKey};
use pqbench_stack_common::reference::reference_main;

type Op = Box<dyn FnMut() -> usize>;

/// A way to sign with a fresh key pair, and that key pair's public key.
type Signer = (Box<dyn Fn(&[u8]) -> Vec<u8>>, Vec<u8>);

fn kem_op(alg: &'static kem::Algorithm, op: &str) -> Option<Op> {
    let dk = DecapsulationKey::generate(alg).ok()?;
    let ek = dk.encapsulation_key().ok()?;
    Some(match op {
        "keygen" => Box::new(move || {
            let dk = DecapsulationKey::generate(alg).unwrap();
            dk.encapsulation_key()
                .unwrap()
                .key_bytes()
                .unwrap()
                .as_ref()
                .len()
        }),
        "encaps" => Box::new(move || ek.encapsulate().unwrap().1.as_ref().len()),
        "decaps" => {
            let (ct, _) = ek.encapsulate().ok()?;
            let ct = ct.as_ref().to_vec();
            Box::new(move || {
                dk.decapsulate(Ciphertext::from(ct.as_slice()))
                    .unwrap()
                    .as_ref()
                    .len()
            })
        }
        _ => return None,
    })
}

fn agreement_op(alg: &'static agreement::Algorithm, op: &str) -> Option<Op> {
    Some(match op {
        "keygen" => Box::new(move || {
            let key = agreement::PrivateKey::generate(alg).unwrap();
            key.compute_public_key().unwrap().as_ref().len()
        }),
        "derive" => {
            let mine = agreement::PrivateKey::generate(alg).ok()?;
            let theirs = agreement::PrivateKey::generate(alg)
                .ok()?
                .compute_public_key()
                .ok()?;
            let peer =
                PeerKey::try_from(UnparsedPublicKey::new(alg, theirs.as_ref().to_vec())).ok()?;
            Box::new(move || agreement::agree(&mine, peer.clone(), (), |s| Ok(s.len())).unwrap())
        }
        _ => return None,
    })
}

fn signature_op(
    keygen: fn() -> Signer,
    verification: &'static dyn signature::VerificationAlgorithm,
    op: &str,
) -> Option<Op> {
    let message = [0x5au8; 32];
    Some(match op {
        "keygen" => Box::new(move || keygen().1.len()),
        "sign" => {
            let (sign, _) = keygen();
            Box::new(move || sign(&message).len())
        }
        "verify" => {
            let (sign, public) = keygen();
            let sig = sign(&message);
            let parsed = ParsedPublicKey::new(verification, public).ok()?;
            Box::new(move || usize::from(parsed.verify_sig(&message, &sig).is_ok()))
        }
        _ => return None,
    })
}

/// ML-DSA's stable API (aws-lc-rs 1.18.0 and newer; the build script sets the cfg).
#[cfg(aws_lc_rs_stable_mldsa)]
fn mldsa(alg: &'static signature::PqdsaSigningAlgorithm) -> Signer {
    let pair = signature::PqdsaKeyPair::generate(alg).unwrap();
    let public = pair.public_key().as_ref().to_vec();
    let sign = move |m: &[u8]| {
        let mut sig = vec![0u8; alg.signature_len()];
        pair.sign(m, &mut sig).unwrap();
        sig
    };
    (Box::new(sign), public)
}

fn operation(alg: &str, op: &str) -> Option<Op> {
    match alg {
        "ML-KEM-512" => kem_op(&kem::ML_KEM_512, op),
        "ML-KEM-768" => kem_op(&kem::ML_KEM_768, op),
        "ML-KEM-1024" => kem_op(&kem::ML_KEM_1024, op),
        "X25519" => agreement_op(&agreement::X25519, op),
        "ECDH-P-256" => agreement_op(&agreement::ECDH_P256, op),
        #[cfg(aws_lc_rs_stable_mldsa)]
        "ML-DSA-44" => signature_op(
            || mldsa(&signature::ML_DSA_44_SIGNING),
            &signature::ML_DSA_44,
            op,
        ),
        #[cfg(aws_lc_rs_stable_mldsa)]
        "ML-DSA-65" => signature_op(
            || mldsa(&signature::ML_DSA_65_SIGNING),
            &signature::ML_DSA_65,
            op,
        ),
        #[cfg(aws_lc_rs_stable_mldsa)]
        "ML-DSA-87" => signature_op(
            || mldsa(&signature::ML_DSA_87_SIGNING),
            &signature::ML_DSA_87,
            op,
        ),
        "Ed25519" => signature_op(
            || {
                let pair = Ed25519KeyPair::generate().unwrap();
                let public = pair.public_key().as_ref().to_vec();
                (
                    Box::new(move |m: &[u8]| pair.sign(m).as_ref().to_vec()),
                    public,
                )
            },
            &signature::ED25519,
            op,
        ),
        "ECDSA-P-256" => signature_op(
            || {
                let pair =
                    EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_ASN1_SIGNING).unwrap();
                let public = pair.public_key().as_ref().to_vec();
                let rng = SystemRandom::new();
                (
                    Box::new(move |m: &[u8]| pair.sign(&rng, m).unwrap().as_ref().to_vec()),
                    public,
                )
            },
            &signature::ECDSA_P256_SHA256_ASN1,
            op,
        ),
        _ => None,
    }
}

fn main() -> ExitCode {
    reference_main("aws-lc-rs", operation)
}
