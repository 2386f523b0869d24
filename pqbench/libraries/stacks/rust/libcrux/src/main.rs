//! pqbench stack worker for libcrux: its formally verified ML-KEM (the one OpenSSH ships) and
//! ML-DSA, and the HACL-derived X25519 and Ed25519 of the same family.
//!
//! libcrux's APIs are derandomized by design: ML-KEM key generation takes 64 bytes (d || z,
//! FIPS 203 ML-KEM.KeyGen_internal), encapsulation 32 (m), ML-DSA key generation the 32-byte
//! xi and signing its 32-byte rnd; X25519 and Ed25519 keys are their 32-byte private keys.
//! So this worker offers seeded key generation, derandomized encapsulation, deterministic
//! ML-DSA signing (rnd = 0^32) and the import of expanded keys, and pqbench can run the NIST
//! known answers on it. The timed loops draw fresh randomness from the operating system
//! (getrandom) for every operation, as a user of these APIs must; ML-DSA signs hedged.
//! Secret keys are held as the libraries hold them: the expanded byte encodings (FIPS 203
//! dk, FIPS 204 sk) and the 32-byte X25519 / Ed25519 private keys.

use pqbench_stack_common::{
    ek_inside_dk, fill_random, key_attributes, locked_version, random_array, random_messages,
    row_sizes, serve, timed, Alg, Answer, Failure, Feature, Hello, Library, NewKey, Offer, Op,
    Prepared, Signed, Timed, MESSAGES,
};
use serde_json::{json, Value};

include!(concat!(env!("OUT_DIR"), "/locked_versions.rs"));

/// The longest context FIPS 204 allows (section 5.2: |ctx| <= 255).
const MAX_CONTEXT: usize = 255;

enum Key {
    /// FIPS 203 dk.
    MlKem(Vec<u8>),
    /// FIPS 204 sk.
    MlDsa(Vec<u8>),
    X25519([u8; 32]),
    Ed25519([u8; 32]),
}

fn failed(what: &str) -> Failure {
    Failure::error(format!("libcrux: {what}"))
}

fn exact<const N: usize>(what: &str, bytes: &[u8]) -> Answer<[u8; N]> {
    bytes
        .try_into()
        .map_err(|_| Failure::error(format!("{what} is {} bytes, expected {N}", bytes.len())))
}

/// Why a context string is refused for Ed25519, whose RFC 8032 pure variant signs the message
/// alone.
fn ed25519_pure() -> String {
    "Ed25519 (RFC 8032 pure) takes no context".to_string()
}

fn context_len(context: &[u8]) -> Answer<()> {
    if context.len() <= MAX_CONTEXT {
        Ok(())
    } else {
        Err(Failure::error(format!(
            "context is {} bytes; FIPS 204 allows at most {MAX_CONTEXT}",
            context.len()
        )))
    }
}

/// Rotates through a row's messages, one index per call.
fn rotation() -> impl FnMut() -> usize {
    let mut next = 0;
    move || {
        let at = next;
        next = (next + 1) % MESSAGES;
        at
    }
}

/// One ML-KEM parameter set of libcrux-ml-kem (its module and its typed byte arrays).
trait MlKemSet {
    fn keygen(seed: [u8; 64]) -> (Vec<u8>, Vec<u8>);
    fn encaps(public: &[u8], m: [u8; 32]) -> Answer<(Vec<u8>, Vec<u8>)>;
    fn valid_secret(secret: &[u8]) -> bool;
    fn decaps(secret: &[u8], ciphertext: &[u8]) -> Answer<Vec<u8>>;
    fn prepare(op: Op) -> Box<dyn Timed>;
}

macro_rules! mlkem_set {
    ($set:ident, $module:ident, $public:ident, $secret:ident, $ciphertext:ident) => {
        struct $set;

        impl MlKemSet for $set {
            fn keygen(seed: [u8; 64]) -> (Vec<u8>, Vec<u8>) {
                let pair = libcrux_ml_kem::$module::generate_key_pair(seed);
                (pair.pk().to_vec(), pair.sk().to_vec())
            }

            fn encaps(public: &[u8], m: [u8; 32]) -> Answer<(Vec<u8>, Vec<u8>)> {
                use libcrux_ml_kem::$module as kem;
                let public = kem::$public::try_from(public)
                    .map_err(|_| Failure::error("public key has the wrong length"))?;
                // FIPS 203 section 7.2: the encapsulation key check comes first.
                if !kem::validate_public_key(&public) {
                    return Err(failed("public key fails the FIPS 203 modulus check"));
                }
                let (ciphertext, shared) = kem::encapsulate(&public, m);
                Ok((ciphertext.as_ref().to_vec(), shared.to_vec()))
            }

            fn valid_secret(secret: &[u8]) -> bool {
                use libcrux_ml_kem::$module as kem;
                // The ciphertext argument is only checked for its (typed) length.
                kem::$secret::try_from(secret)
                    .map(|secret| kem::validate_private_key(&secret, &kem::$ciphertext::default()))
                    .unwrap_or(false)
            }

            fn decaps(secret: &[u8], ciphertext: &[u8]) -> Answer<Vec<u8>> {
                use libcrux_ml_kem::$module as kem;
                let secret = kem::$secret::try_from(secret)
                    .map_err(|_| Failure::error("secret key has the wrong length"))?;
                let ciphertext = kem::$ciphertext::try_from(ciphertext)
                    .map_err(|_| Failure::error("ciphertext has the wrong length"))?;
                Ok(kem::decapsulate(&secret, &ciphertext).to_vec())
            }

            fn prepare(op: Op) -> Box<dyn Timed> {
                use libcrux_ml_kem::$module as kem;
                let pair = kem::generate_key_pair(random_array());
                match op {
                    Op::Keygen => timed(|| kem::generate_key_pair(random_array())),
                    Op::Encaps => {
                        // The peer's key, checked once as it arrives (outside the clock).
                        let public = pair.public_key().clone();
                        assert!(
                            kem::validate_public_key(&public),
                            "fresh key fails its check"
                        );
                        timed(move || kem::encapsulate(&public, random_array()))
                    }
                    _ => {
                        let (ciphertext, _) = kem::encapsulate(pair.public_key(), random_array());
                        let secret = pair.private_key().clone();
                        timed(move || kem::decapsulate(&secret, &ciphertext))
                    }
                }
            }
        }
    };
}

mlkem_set!(
    MlKem512,
    mlkem512,
    MlKem512PublicKey,
    MlKem512PrivateKey,
    MlKem512Ciphertext
);
mlkem_set!(
    MlKem768,
    mlkem768,
    MlKem768PublicKey,
    MlKem768PrivateKey,
    MlKem768Ciphertext
);
mlkem_set!(
    MlKem1024,
    mlkem1024,
    MlKem1024PublicKey,
    MlKem1024PrivateKey,
    MlKem1024Ciphertext
);

/// One ML-DSA parameter set of libcrux-ml-dsa.
trait MlDsaSet {
    fn keygen(xi: [u8; 32]) -> (Vec<u8>, Vec<u8>);
    fn sign(secret: &[u8], message: &[u8], context: &[u8], rnd: [u8; 32]) -> Answer<Vec<u8>>;
    fn verify(public: &[u8], message: &[u8], context: &[u8], signature: &[u8]) -> Answer<bool>;
    fn prepare(op: Op) -> Box<dyn Timed>;
}

macro_rules! mldsa_set {
    ($set:ident, $module:ident, $signing:ident, $verification:ident, $signature:ident) => {
        struct $set;

        impl MlDsaSet for $set {
            fn keygen(xi: [u8; 32]) -> (Vec<u8>, Vec<u8>) {
                let pair = libcrux_ml_dsa::$module::generate_key_pair(xi);
                (
                    pair.verification_key.as_slice().to_vec(),
                    pair.signing_key.as_slice().to_vec(),
                )
            }

            fn sign(
                secret: &[u8],
                message: &[u8],
                context: &[u8],
                rnd: [u8; 32],
            ) -> Answer<Vec<u8>> {
                use libcrux_ml_dsa::$module as dsa;
                let secret = dsa::$signing::new(exact("secret key", secret)?);
                dsa::sign(&secret, message, context, rnd)
                    .map(|signature| signature.as_slice().to_vec())
                    .map_err(|e| failed(&format!("signing failed: {e:?}")))
            }

            fn verify(
                public: &[u8],
                message: &[u8],
                context: &[u8],
                signature: &[u8],
            ) -> Answer<bool> {
                use libcrux_ml_dsa::$module as dsa;
                let public = dsa::$verification::new(exact("public", public)?);
                // A signature of the wrong length is a wrong signature.
                let Ok(signature) = exact("signature", signature) else {
                    return Ok(false);
                };
                Ok(
                    dsa::verify(&public, message, context, &dsa::$signature::new(signature))
                        .is_ok(),
                )
            }

            fn prepare(op: Op) -> Box<dyn Timed> {
                use libcrux_ml_dsa::$module as dsa;
                if op == Op::Keygen {
                    return timed(|| dsa::generate_key_pair(random_array()));
                }
                let pair = dsa::generate_key_pair(random_array());
                let messages = random_messages(MESSAGES);
                let mut rotate = rotation();
                if op == Op::Sign {
                    let secret = pair.signing_key;
                    // Hedged (FIPS 204 section 3.4): fresh rnd for every signature.
                    return timed(move || {
                        dsa::sign(&secret, &messages[rotate()], b"", random_array())
                            .expect("ML-DSA sign")
                    });
                }
                let signatures: Vec<_> = messages
                    .iter()
                    .map(|m| {
                        dsa::sign(&pair.signing_key, m, b"", random_array()).expect("ML-DSA sign")
                    })
                    .collect();
                let public = pair.verification_key;
                for (message, signature) in messages.iter().zip(&signatures) {
                    assert!(
                        dsa::verify(&public, message, b"", signature).is_ok(),
                        "fresh signature fails"
                    );
                }
                timed(move || {
                    let at = rotate();
                    dsa::verify(&public, &messages[at], b"", &signatures[at]).is_ok()
                })
            }
        }
    };
}

mldsa_set!(
    MlDsa44,
    ml_dsa_44,
    MLDSA44SigningKey,
    MLDSA44VerificationKey,
    MLDSA44Signature
);
mldsa_set!(
    MlDsa65,
    ml_dsa_65,
    MLDSA65SigningKey,
    MLDSA65VerificationKey,
    MLDSA65Signature
);
mldsa_set!(
    MlDsa87,
    ml_dsa_87,
    MLDSA87SigningKey,
    MLDSA87VerificationKey,
    MLDSA87Signature
);

fn mlkem_keygen(alg: Alg, seed: [u8; 64]) -> (Vec<u8>, Vec<u8>) {
    match alg {
        Alg::MlKem512 => MlKem512::keygen(seed),
        Alg::MlKem768 => MlKem768::keygen(seed),
        _ => MlKem1024::keygen(seed),
    }
}

fn mldsa_keygen(alg: Alg, xi: [u8; 32]) -> (Vec<u8>, Vec<u8>) {
    match alg {
        Alg::MlDsa44 => MlDsa44::keygen(xi),
        Alg::MlDsa65 => MlDsa65::keygen(xi),
        _ => MlDsa87::keygen(xi),
    }
}

fn x25519_public(secret: &[u8; 32]) -> [u8; 32] {
    let mut public = [0u8; 32];
    libcrux_curve25519::secret_to_public(&mut public, secret);
    public
}

fn ed25519_public(secret: &[u8; 32]) -> [u8; 32] {
    let mut public = [0u8; 32];
    libcrux_ed25519::secret_to_public(&mut public, secret);
    public
}

fn x25519_prepare(op: Op) -> Box<dyn Timed> {
    if op == Op::Keygen {
        return timed(|| {
            let secret: [u8; 32] = random_array();
            (x25519_public(&secret), secret)
        });
    }
    let secret: [u8; 32] = random_array();
    let peer = x25519_public(&random_array());
    timed(move || {
        let mut shared = [0u8; 32];
        libcrux_curve25519::ecdh(&mut shared, &peer, &secret)
            .ok()
            .map(|()| shared)
            .expect("X25519")
    })
}

fn ed25519_prepare(op: Op) -> Box<dyn Timed> {
    if op == Op::Keygen {
        return timed(|| {
            let secret: [u8; 32] = random_array();
            (ed25519_public(&secret), secret)
        });
    }
    let secret: [u8; 32] = random_array();
    let public = ed25519_public(&secret);
    let messages = random_messages(MESSAGES);
    let mut rotate = rotation();
    if op == Op::Sign {
        return timed(move || {
            libcrux_ed25519::sign(&messages[rotate()], &secret).expect("Ed25519 sign")
        });
    }
    let signatures: Vec<[u8; 64]> = messages
        .iter()
        .map(|m| libcrux_ed25519::sign(m, &secret).expect("Ed25519 sign"))
        .collect();
    timed(move || {
        let at = rotate();
        libcrux_ed25519::verify(&messages[at], &public, &signatures[at]).is_ok()
    })
}

/// The code path libcrux-ml-kem and libcrux-ml-dsa take: their AVX2 code is compiled in on
/// every x86-64 build and chosen at run time by libcrux-platform's CPU detection.
fn simd_path() -> &'static str {
    if libcrux_platform::simd256_support() {
        "avx2"
    } else {
        "portable"
    }
}

struct Libcrux;

impl Library for Libcrux {
    type Key = Key;

    fn hello(&self) -> Hello {
        let with_all = |alg, library, features: &[Feature], code_path: &str| Offer {
            alg,
            library,
            features: features.to_vec(),
            code_path: code_path.to_string(),
        };
        let kem = [
            Feature::SeededKeygen,
            Feature::DerandomizedEncaps,
            Feature::ImportExpanded,
        ];
        let dsa = [
            Feature::SeededKeygen,
            Feature::DeterministicSign,
            Feature::ImportExpanded,
        ];
        let mut offers = Vec::new();
        for alg in [Alg::MlKem512, Alg::MlKem768, Alg::MlKem1024] {
            offers.push(with_all(alg, "libcrux-ml-kem", &kem, simd_path()));
        }
        for alg in [Alg::MlDsa44, Alg::MlDsa65, Alg::MlDsa87] {
            offers.push(with_all(alg, "libcrux-ml-dsa", &dsa, simd_path()));
        }
        // HACL* curve25519_51 and ed25519, compiled to Rust (hacl-rs): no assembly, no dispatch.
        offers.push(with_all(
            Alg::X25519,
            "libcrux-curve25519",
            &[Feature::SeededKeygen],
            "portable",
        ));
        offers.push(with_all(
            Alg::Ed25519,
            "libcrux-ed25519",
            &[Feature::SeededKeygen],
            "portable",
        ));
        let crates = [
            "libcrux-ml-kem",
            "libcrux-ml-dsa",
            "libcrux-curve25519",
            "libcrux-ed25519",
            "libcrux-sha3",
            "libcrux-sha2",
            "libcrux-hacl-rs",
            "libcrux-intrinsics",
            "libcrux-platform",
        ];
        Hello {
            implementation: "libcrux",
            runtime: RUSTC.to_string(),
            libraries: crates
                .iter()
                .map(|c| (c.to_string(), locked_version(LOCKED, c)))
                .collect(),
            offers,
        }
    }

    fn keygen(&self, alg: Alg, seed: Option<&[u8]>) -> Answer<NewKey<Key>> {
        match alg {
            Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => {
                let seed = match seed {
                    Some(seed) => exact("seed", seed)?,
                    None => random_array(),
                };
                let (public, secret) = mlkem_keygen(alg, seed);
                Ok(NewKey {
                    public: Some(public),
                    secret: Key::MlKem(secret),
                })
            }
            Alg::MlDsa44 | Alg::MlDsa65 | Alg::MlDsa87 => {
                let xi = match seed {
                    Some(seed) => exact("seed", seed)?,
                    None => random_array(),
                };
                let (public, secret) = mldsa_keygen(alg, xi);
                Ok(NewKey {
                    public: Some(public),
                    secret: Key::MlDsa(secret),
                })
            }
            Alg::X25519 => {
                let secret = match seed {
                    Some(seed) => exact("seed", seed)?,
                    None => random_array(),
                };
                Ok(NewKey {
                    public: Some(x25519_public(&secret).to_vec()),
                    secret: Key::X25519(secret),
                })
            }
            _ => {
                let secret = match seed {
                    Some(seed) => exact("seed", seed)?,
                    None => random_array(),
                };
                Ok(NewKey {
                    public: Some(ed25519_public(&secret).to_vec()),
                    secret: Key::Ed25519(secret),
                })
            }
        }
    }

    fn import(&self, alg: Alg, secret: &[u8]) -> Answer<NewKey<Key>> {
        let (_, secret_len, _) = alg.sizes();
        if secret.len() != secret_len {
            return Err(Failure::error(format!(
                "secret is {} bytes, expected {secret_len}",
                secret.len()
            )));
        }
        match alg {
            Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => {
                let valid = match alg {
                    Alg::MlKem512 => MlKem512::valid_secret(secret),
                    Alg::MlKem768 => MlKem768::valid_secret(secret),
                    _ => MlKem1024::valid_secret(secret),
                };
                if !valid {
                    // FIPS 203 section 7.3: the hash check on dk.
                    return Err(failed("decapsulation key fails the FIPS 203 hash check"));
                }
                Ok(NewKey {
                    public: ek_inside_dk(alg, secret),
                    secret: Key::MlKem(secret.to_vec()),
                })
            }
            // A FIPS 204 sk does not hold t1, so the public key cannot be read from it.
            _ => Ok(NewKey {
                public: None,
                secret: Key::MlDsa(secret.to_vec()),
            }),
        }
    }

    fn encaps(&self, alg: Alg, public: &[u8], random: Option<&[u8]>) -> Answer<(Vec<u8>, Vec<u8>)> {
        let m = match random {
            Some(m) => exact("random", m)?,
            None => random_array(),
        };
        match alg {
            Alg::MlKem512 => MlKem512::encaps(public, m),
            Alg::MlKem768 => MlKem768::encaps(public, m),
            _ => MlKem1024::encaps(public, m),
        }
    }

    fn decaps(&self, alg: Alg, key: &Key, ciphertext: &[u8]) -> Answer<Vec<u8>> {
        let Key::MlKem(secret) = key else {
            return Err(Failure::error(format!("not an {} key", alg.name())));
        };
        match alg {
            Alg::MlKem512 => MlKem512::decaps(secret, ciphertext),
            Alg::MlKem768 => MlKem768::decaps(secret, ciphertext),
            _ => MlKem1024::decaps(secret, ciphertext),
        }
    }

    fn sign(&self, alg: Alg, key: &Key, signed: &Signed, deterministic: bool) -> Answer<Vec<u8>> {
        let Signed { message, context } = signed;
        match key {
            Key::MlDsa(secret) => {
                context_len(context)?;
                // FIPS 204 algorithm 2: rnd is 0^32 for the deterministic variant.
                let rnd = if deterministic {
                    [0u8; 32]
                } else {
                    random_array()
                };
                match alg {
                    Alg::MlDsa44 => MlDsa44::sign(secret, message, context, rnd),
                    Alg::MlDsa65 => MlDsa65::sign(secret, message, context, rnd),
                    _ => MlDsa87::sign(secret, message, context, rnd),
                }
            }
            Key::Ed25519(secret) => {
                signed.without_context(ed25519_pure)?;
                libcrux_ed25519::sign(message, secret)
                    .map(|signature| signature.to_vec())
                    .map_err(|e| failed(&format!("Ed25519 signing failed: {e:?}")))
            }
            _ => Err(Failure::error(format!("not a {} signing key", alg.name()))),
        }
    }

    fn verify(&self, alg: Alg, public: &[u8], signed: &Signed, signature: &[u8]) -> Answer<bool> {
        let Signed { message, context } = signed;
        match alg {
            Alg::Ed25519 => {
                signed.without_context(ed25519_pure)?;
                let public: [u8; 32] = exact("public", public)?;
                let Ok(signature) = <[u8; 64]>::try_from(signature) else {
                    return Ok(false);
                };
                Ok(libcrux_ed25519::verify(message, &public, &signature).is_ok())
            }
            _ => {
                context_len(context)?;
                match alg {
                    Alg::MlDsa44 => MlDsa44::verify(public, message, context, signature),
                    Alg::MlDsa65 => MlDsa65::verify(public, message, context, signature),
                    _ => MlDsa87::verify(public, message, context, signature),
                }
            }
        }
    }

    fn derive(&self, alg: Alg, key: &Key, peer: &[u8]) -> Answer<Vec<u8>> {
        let Key::X25519(secret) = key else {
            return Err(Failure::error(format!("not an {} key", alg.name())));
        };
        let peer: [u8; 32] = exact("peer", peer)?;
        let mut shared = [0u8; 32];
        libcrux_curve25519::ecdh(&mut shared, &peer, secret)
            .map_err(|_| failed("X25519 gave the all-zero secret (a small-order peer point)"))?;
        Ok(shared.to_vec())
    }

    fn prepare(&self, alg: Alg, op: Op) -> Answer<Prepared> {
        let mut attributes: Vec<(&'static str, Value)> =
            vec![("randomness", json!("getrandom per operation"))];
        let (timed, secret_form, public_form) = match alg {
            Alg::MlKem512 => (MlKem512::prepare(op), "expanded", "encoded"),
            Alg::MlKem768 => (MlKem768::prepare(op), "expanded", "encoded"),
            Alg::MlKem1024 => (MlKem1024::prepare(op), "expanded", "encoded"),
            Alg::MlDsa44 => (MlDsa44::prepare(op), "expanded", "encoded"),
            Alg::MlDsa65 => (MlDsa65::prepare(op), "expanded", "encoded"),
            Alg::MlDsa87 => (MlDsa87::prepare(op), "expanded", "encoded"),
            Alg::X25519 => (x25519_prepare(op), "seed", "encoded"),
            _ => (ed25519_prepare(op), "seed", "encoded"),
        };
        attributes.extend(key_attributes(op, secret_form, public_form));
        if matches!(op, Op::Sign | Op::Verify) {
            let signing = if alg == Alg::Ed25519 {
                "deterministic"
            } else {
                "hedged"
            };
            attributes.push(("signing", json!(signing)));
            attributes.push(("messages", json!(MESSAGES)));
        }
        Ok(Prepared {
            sizes: row_sizes(alg, op),
            attributes,
            timed,
        })
    }
}

fn main() {
    // Fail early, before the hello, if the operating system gives no randomness.
    fill_random(&mut [0u8; 1]);
    std::process::exit(serve(Libcrux));
}
