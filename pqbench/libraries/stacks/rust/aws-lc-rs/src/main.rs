//! pqbench stack worker for aws-lc-rs, the Rust API over AWS-LC (rustls's default provider).
//!
//! What its API allows, and so what this worker advertises:
//! - ML-KEM (`aws_lc_rs::kem`): keys are generated inside AWS-LC only (no seeded key
//!   generation, no caller randomness for encapsulation); an expanded decapsulation key
//!   (FIPS 203 dk) can be imported (`DecapsulationKey::new`, aws-lc-rs 1.16.0 and newer).
//! - ML-DSA (`aws_lc_rs::signature::PqdsaKeyPair`, 1.18.0 and newer: see mldsa.rs): key
//!   generation from the 32-byte seed xi (`from_seed`, FIPS 204 ML-DSA.KeyGen_internal) and
//!   import of an expanded key (`from_raw_private_key`); signing is hedged only (AWS-LC
//!   draws rnd), with an empty context only.
//! - X25519 and ECDH P-256 (`agreement::PrivateKey::from_private_key`): a raw private key
//!   (RFC 7748 scalar, SEC1 big-endian scalar); Ed25519 from its RFC 8032 seed
//!   (`Ed25519KeyPair::from_seed_unchecked`); ECDSA P-256 from its scalar (with the public
//!   point computed by the same library). ECDSA signatures are DER (X9.62 Ecdsa-Sig-Value);
//!   AWS-LC mixes the key and digest into its DRBG for the nonce (hedged).
//!
//! All randomness comes from AWS-LC's own DRBG, as it does for a user of the crate.
//!
//! The worker builds against aws-lc-rs 1.15.0 and newer (a bisect over its releases); the
//! build script reads the version from Cargo.lock and sets the cfgs that tell the APIs apart.

mod mldsa;

use std::hint::black_box;

use aws_lc_rs::agreement::{self, ParsedPublicKey as PeerKey, UnparsedPublicKey};
use aws_lc_rs::kem::{self, Ciphertext, DecapsulationKey, EncapsulationKey};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, ParsedPublicKey, VerificationAlgorithm,
};
use pqbench_stack_common::{
    ek_inside_dk, key_attributes, locked_version, random_messages, row_sizes, serve, timed, Alg,
    Answer, Failure, Feature, Hello, Library, NewKey, Offer, Op, Prepared, Signed, MESSAGES,
};
use serde_json::{json, Value};

include!(concat!(env!("OUT_DIR"), "/locked_versions.rs"));
include!(concat!(env!("OUT_DIR"), "/aws_lc_symbols.rs"));

const CRATE: &str = "aws-lc-rs";

enum Key {
    Kem(DecapsulationKey),
    MlDsa(mldsa::Pair),
    Agreement(agreement::PrivateKey),
    Ed25519(Ed25519KeyPair),
    Ecdsa(EcdsaKeyPair),
}

fn kem_algorithm(alg: Alg) -> &'static kem::Algorithm {
    match alg {
        Alg::MlKem512 => &kem::ML_KEM_512,
        Alg::MlKem768 => &kem::ML_KEM_768,
        _ => &kem::ML_KEM_1024,
    }
}

fn agreement_algorithm(alg: Alg) -> &'static agreement::Algorithm {
    match alg {
        Alg::X25519 => &agreement::X25519,
        _ => &agreement::ECDH_P256,
    }
}

fn verification_algorithm(alg: Alg) -> &'static dyn VerificationAlgorithm {
    match alg {
        Alg::Ed25519 => &signature::ED25519,
        Alg::EcdsaP256 => &signature::ECDSA_P256_SHA256_ASN1,
        _ => mldsa::verification(alg),
    }
}

/// Length of a public key in its standard encoding.
fn public_len(alg: Alg) -> usize {
    alg.sizes().0
}

/// Every key is an AWS-LC object (an EVP_PKEY), parsed or made outside the clock, and every
/// random byte comes from AWS-LC's own DRBG.
fn attributes(op: Op) -> Vec<(&'static str, Value)> {
    let mut attributes = key_attributes(op, "object", "object");
    attributes.push(("randomness", json!("AWS-LC DRBG")));
    attributes
}

fn failed(what: &str) -> Failure {
    Failure::error(format!("{CRATE}: {what}"))
}

fn exact_len(what: &str, bytes: &[u8], expected: usize) -> Answer<()> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(Failure::error(format!(
            "{what} is {} bytes, expected {expected}",
            bytes.len()
        )))
    }
}

fn no_context(alg: Alg, signed: &Signed) -> Answer<()> {
    signed.without_context(|| {
        format!(
            "{CRATE}'s {} API takes no context string (empty context only)",
            alg.name()
        )
    })
}

/// Whether this aws-lc-rs imports an expanded ML-KEM key (`DecapsulationKey::new`, 1.16.0).
const KEM_IMPORT: bool = cfg!(aws_lc_rs_kem_import);

#[cfg(aws_lc_rs_kem_import)]
fn import_dk(alg: Alg, dk: &[u8]) -> Answer<DecapsulationKey> {
    DecapsulationKey::new(kem_algorithm(alg), dk)
        .map_err(|e| failed(&format!("decapsulation key rejected: {e}")))
}

#[cfg(not(aws_lc_rs_kem_import))]
fn import_dk(_alg: Alg, _dk: &[u8]) -> Answer<DecapsulationKey> {
    Err(Failure::not_offered(
        "this aws-lc-rs cannot import an ML-KEM key",
    ))
}

/// The version of the AWS-LC linked in ("AWS-LC 5.12.0" from OpenSSL_version, as
/// aws-lc-rs's own `awslc_version` reads it in the releases that have it).
fn awslc_version() -> String {
    aws_lc_rs::init();
    // SAFETY: OpenSSL_version returns a pointer to a static NUL-terminated string.
    let text = unsafe { std::ffi::CStr::from_ptr(OpenSSL_version(OPENSSL_VERSION)) };
    let text = text.to_string_lossy();
    text.strip_prefix("AWS-LC ").unwrap_or(&text).to_string()
}

/// AWS-LC's CPU capability vector (OPENSSL_ia32cap_P), once the library is initialised.
fn capabilities() -> [u32; 4] {
    aws_lc_rs::init();
    // SAFETY: AWS-LC writes the vector once during initialisation (done above) and only
    // reads it afterwards; this is a plain read of four words.
    unsafe { std::ptr::read_volatile(std::ptr::addr_of!(OPENSSL_ia32cap_P)) }
}

/// The code path AWS-LC dispatches to for `alg`, from its own capability vector and the
/// rules of its sources: mlkem-native's x86_64 backend needs AVX2 (and BMI2 from aws-lc-sys
/// 0.46.0: ml_kem/mlkem_native_config.h), mldsa-native's AVX2 (ml_dsa/mldsa_native_config.h,
/// in every AWS-LC that an aws-lc-rs with stable ML-DSA links);
/// s2n-bignum's curve25519 and the nistz256 P-256 code take their MULX/ADX variants when
/// both are present and their `_alt`/plain variants otherwise.
fn code_path(alg: Alg, cap: [u32; 4]) -> String {
    if !cfg!(target_arch = "x86_64") {
        return "unknown".to_string();
    }
    let avx2 = cap[2] & (1 << 5) != 0;
    let bmi2 = cap[2] & (1 << 8) != 0;
    let adx = cap[2] & (1 << 19) != 0;
    let mulx = if bmi2 && adx {
        "mulx/adx"
    } else {
        "no mulx/adx"
    };
    match alg {
        Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => {
            if avx2 && (bmi2 || !cfg!(aws_lc_mlkem_needs_bmi2)) {
                "avx2"
            } else {
                "portable"
            }
            .to_string()
        }
        Alg::MlDsa44 | Alg::MlDsa65 | Alg::MlDsa87 => {
            if avx2 { "avx2" } else { "portable" }.to_string()
        }
        Alg::X25519 | Alg::Ed25519 => format!("amd64 assembly (s2n-bignum, {mulx})"),
        Alg::EcdhP256 | Alg::EcdsaP256 => format!("amd64 assembly (nistz256, {mulx})"),
    }
}

struct AwsLc {
    rng: SystemRandom,
}

impl AwsLc {
    fn new_key(&self, alg: Alg, seed: Option<&[u8]>) -> Answer<NewKey<Key>> {
        match alg {
            Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => {
                let dk = DecapsulationKey::generate(kem_algorithm(alg))
                    .map_err(|_| failed("ML-KEM key generation failed"))?;
                let ek = dk
                    .encapsulation_key()
                    .map_err(|_| failed("no encapsulation key"))?;
                let public = ek
                    .key_bytes()
                    .map_err(|_| failed("encoding the public key"))?;
                Ok(NewKey {
                    public: Some(public.as_ref().to_vec()),
                    secret: Key::Kem(dk),
                })
            }
            Alg::MlDsa44 | Alg::MlDsa65 | Alg::MlDsa87 => {
                let pair = match seed {
                    Some(xi) => {
                        exact_len("seed", xi, 32)?;
                        mldsa::from_seed(alg, xi)
                    }
                    None => mldsa::generate(alg),
                }
                .map_err(|why| failed(&why))?;
                Ok(NewKey {
                    public: Some(pair.public()),
                    secret: Key::MlDsa(pair),
                })
            }
            Alg::X25519 | Alg::EcdhP256 => {
                let algorithm = agreement_algorithm(alg);
                let private = match seed {
                    Some(scalar) => {
                        exact_len("seed", scalar, 32)?;
                        agreement::PrivateKey::from_private_key(algorithm, scalar)
                            .map_err(|e| failed(&format!("private key rejected: {e}")))?
                    }
                    None => agreement::PrivateKey::generate(algorithm)
                        .map_err(|_| failed("key generation failed"))?,
                };
                let public = private
                    .compute_public_key()
                    .map_err(|_| failed("computing the public key"))?;
                Ok(NewKey {
                    public: Some(public.as_ref().to_vec()),
                    secret: Key::Agreement(private),
                })
            }
            Alg::Ed25519 => {
                let pair = match seed {
                    Some(seed) => {
                        exact_len("seed", seed, 32)?;
                        Ed25519KeyPair::from_seed_unchecked(seed)
                            .map_err(|e| failed(&format!("seed rejected: {e}")))?
                    }
                    None => {
                        Ed25519KeyPair::generate().map_err(|_| failed("key generation failed"))?
                    }
                };
                Ok(NewKey {
                    public: Some(pair.public_key().as_ref().to_vec()),
                    secret: Key::Ed25519(pair),
                })
            }
            Alg::EcdsaP256 => {
                let algorithm = &signature::ECDSA_P256_SHA256_ASN1_SIGNING;
                let pair = match seed {
                    Some(scalar) => {
                        exact_len("seed", scalar, 32)?;
                        let private =
                            agreement::PrivateKey::from_private_key(&agreement::ECDH_P256, scalar)
                                .map_err(|e| failed(&format!("private scalar rejected: {e}")))?;
                        let public = private
                            .compute_public_key()
                            .map_err(|_| failed("computing the public point"))?;
                        EcdsaKeyPair::from_private_key_and_public_key(
                            algorithm,
                            scalar,
                            public.as_ref(),
                        )
                        .map_err(|e| failed(&format!("private scalar rejected: {e}")))?
                    }
                    None => EcdsaKeyPair::generate(algorithm)
                        .map_err(|_| failed("key generation failed"))?,
                };
                Ok(NewKey {
                    public: Some(pair.public_key().as_ref().to_vec()),
                    secret: Key::Ecdsa(pair),
                })
            }
        }
    }

    fn signature(&self, alg: Alg, key: &Key, message: &[u8]) -> Answer<Vec<u8>> {
        match key {
            Key::MlDsa(pair) => {
                let mut out = Vec::new();
                let len = pair
                    .sign_into(message, &mut out)
                    .map_err(|why| failed(&why))?;
                out.truncate(len);
                Ok(out)
            }
            Key::Ed25519(pair) => Ok(pair.sign(message).as_ref().to_vec()),
            Key::Ecdsa(pair) => pair
                .sign(&self.rng, message)
                .map(|sig| sig.as_ref().to_vec())
                .map_err(|_| failed("ECDSA signing failed")),
            _ => Err(Failure::error(format!("not a {} signing key", alg.name()))),
        }
    }

    fn prepare_kem(&self, alg: Alg, op: Op) -> Answer<Prepared> {
        let algorithm = kem_algorithm(alg);
        let sizes = row_sizes(alg, op);
        let dk =
            DecapsulationKey::generate(algorithm).map_err(|_| failed("key generation failed"))?;
        let ek = dk
            .encapsulation_key()
            .map_err(|_| failed("no encapsulation key"))?;
        let timed = match op {
            Op::Keygen => timed(move || {
                // A key pair is only usable once its public key can be sent.
                let dk = DecapsulationKey::generate(algorithm).expect("ML-KEM keygen");
                let ek = dk.encapsulation_key().expect("ML-KEM encapsulation key");
                (ek.key_bytes().expect("ML-KEM public key").as_ref()[0], dk)
            }),
            Op::Encaps => {
                // The public key as a peer's bytes, parsed once (outside the clock).
                let public = ek
                    .key_bytes()
                    .map_err(|_| failed("encoding the public key"))?;
                let ek = EncapsulationKey::new(algorithm, public.as_ref())
                    .map_err(|e| failed(&format!("public key rejected: {e}")))?;
                timed(move || ek.encapsulate().expect("ML-KEM encapsulate"))
            }
            _ => {
                let (ciphertext, _) = ek
                    .encapsulate()
                    .map_err(|_| failed("encapsulation failed"))?;
                let ciphertext = ciphertext.as_ref().to_vec();
                timed(move || {
                    dk.decapsulate(Ciphertext::from(ciphertext.as_slice()))
                        .expect("ML-KEM decapsulate")
                })
            }
        };
        Ok(Prepared {
            sizes,
            attributes: attributes(op),
            timed,
        })
    }

    fn prepare_agreement(&self, alg: Alg, op: Op) -> Answer<Prepared> {
        let algorithm = agreement_algorithm(alg);
        let sizes = row_sizes(alg, op);
        let timed = match op {
            Op::Keygen => timed(move || {
                let private = agreement::PrivateKey::generate(algorithm).expect("keygen");
                let public = private.compute_public_key().expect("public key");
                (public.as_ref()[0], private)
            }),
            _ => {
                let private =
                    agreement::PrivateKey::generate(algorithm).map_err(|_| failed("keygen"))?;
                let peer_private =
                    agreement::PrivateKey::generate(algorithm).map_err(|_| failed("keygen"))?;
                let peer_public = peer_private
                    .compute_public_key()
                    .map_err(|_| failed("peer public key"))?;
                let peer =
                    PeerKey::try_from(UnparsedPublicKey::new(algorithm, peer_public.as_ref()))
                        .map_err(|e| failed(&format!("peer key rejected: {e}")))?;
                timed(move || {
                    agreement::agree(&private, peer.clone(), (), |secret| {
                        let mut out = [0u8; 32];
                        out.copy_from_slice(secret);
                        Ok(out)
                    })
                    .expect("key agreement")
                })
            }
        };
        Ok(Prepared {
            sizes,
            attributes: attributes(op),
            timed,
        })
    }

    fn prepare_signature(&self, alg: Alg, op: Op) -> Answer<Prepared> {
        let sizes = row_sizes(alg, op);
        let signing = if alg == Alg::Ed25519 {
            "deterministic"
        } else {
            "hedged"
        };
        let mut attributes = attributes(op);
        let timed = match op {
            Op::Keygen => match alg {
                Alg::Ed25519 => timed(|| Ed25519KeyPair::generate().expect("Ed25519 keygen")),
                Alg::EcdsaP256 => timed(|| {
                    EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_ASN1_SIGNING)
                        .expect("ECDSA keygen")
                }),
                _ => timed(move || mldsa::generate(alg).expect("ML-DSA keygen")),
            },
            _ => {
                attributes.push(("signing", json!(signing)));
                attributes.push(("messages", json!(MESSAGES)));
                let key = self.new_key(alg, None)?;
                let public = key.public.unwrap_or_default();
                let messages = random_messages(MESSAGES);
                if op == Op::Sign {
                    self.timed_sign(key.secret, messages)
                } else {
                    let signatures = messages
                        .iter()
                        .map(|m| self.signature(alg, &key.secret, m))
                        .collect::<Answer<Vec<Vec<u8>>>>()?;
                    let parsed = ParsedPublicKey::new(verification_algorithm(alg), &public)
                        .map_err(|e| failed(&format!("public key rejected: {e}")))?;
                    for (message, signature) in messages.iter().zip(&signatures) {
                        parsed
                            .verify_sig(message, signature)
                            .map_err(|_| failed("a fresh signature did not verify"))?;
                    }
                    let mut next = 0;
                    timed(move || {
                        let at = next;
                        next = (next + 1) % MESSAGES;
                        parsed.verify_sig(&messages[at], &signatures[at]).is_ok()
                    })
                }
            }
        };
        Ok(Prepared {
            sizes,
            attributes,
            timed,
        })
    }

    fn timed_sign(
        &self,
        key: Key,
        messages: Vec<[u8; 32]>,
    ) -> Box<dyn pqbench_stack_common::Timed> {
        let mut next = 0;
        let mut rotate = move || {
            let at = next;
            next = (next + 1) % MESSAGES;
            at
        };
        match key {
            Key::Ed25519(pair) => timed(move || pair.sign(&messages[rotate()])),
            Key::Ecdsa(pair) => {
                let rng = SystemRandom::new();
                timed(move || pair.sign(&rng, &messages[rotate()]).expect("ECDSA sign"))
            }
            Key::MlDsa(pair) => {
                let mut out = Vec::new();
                timed(move || {
                    let len = pair
                        .sign_into(&messages[rotate()], &mut out)
                        .expect("ML-DSA sign");
                    black_box(&out);
                    len
                })
            }
            _ => unreachable!("signature keys only"),
        }
    }
}

impl Library for AwsLc {
    type Key = Key;

    fn hello(&self) -> Hello {
        let cap = capabilities();
        let mut offers = Vec::new();
        for alg in Alg::ALL {
            if mldsa::is_mldsa(alg) && !mldsa::OFFERED {
                continue;
            }
            let features = match alg {
                Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 if KEM_IMPORT => {
                    vec![Feature::ImportExpanded]
                }
                Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => vec![],
                Alg::MlDsa44 | Alg::MlDsa65 | Alg::MlDsa87 => {
                    vec![Feature::SeededKeygen, Feature::ImportExpanded]
                }
                _ => vec![Feature::SeededKeygen],
            };
            offers.push(Offer {
                alg,
                library: CRATE,
                features,
                code_path: code_path(alg, cap),
            });
        }
        Hello {
            implementation: "aws-lc-rs",
            runtime: RUSTC.to_string(),
            libraries: vec![
                (CRATE.to_string(), locked_version(LOCKED, "aws-lc-rs")),
                (
                    "aws-lc-sys".to_string(),
                    locked_version(LOCKED, "aws-lc-sys"),
                ),
                ("AWS-LC".to_string(), awslc_version()),
            ],
            offers,
        }
    }

    fn keygen(&self, alg: Alg, seed: Option<&[u8]>) -> Answer<NewKey<Key>> {
        self.new_key(alg, seed)
    }

    fn import(&self, alg: Alg, secret: &[u8]) -> Answer<NewKey<Key>> {
        match alg {
            Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => {
                exact_len("secret", secret, alg.sizes().1)?;
                let dk = import_dk(alg, secret)?;
                Ok(NewKey {
                    public: ek_inside_dk(alg, secret),
                    secret: Key::Kem(dk),
                })
            }
            _ => {
                let pair = mldsa::from_expanded(alg, secret).map_err(|why| failed(&why))?;
                Ok(NewKey {
                    public: Some(pair.public()),
                    secret: Key::MlDsa(pair),
                })
            }
        }
    }

    fn encaps(
        &self,
        alg: Alg,
        public: &[u8],
        _random: Option<&[u8]>,
    ) -> Answer<(Vec<u8>, Vec<u8>)> {
        exact_len("public", public, public_len(alg))?;
        let ek = EncapsulationKey::new(kem_algorithm(alg), public)
            .map_err(|e| failed(&format!("public key rejected: {e}")))?;
        let (ciphertext, shared) = ek
            .encapsulate()
            .map_err(|_| failed("encapsulation failed"))?;
        Ok((ciphertext.as_ref().to_vec(), shared.as_ref().to_vec()))
    }

    fn decaps(&self, alg: Alg, key: &Key, ciphertext: &[u8]) -> Answer<Vec<u8>> {
        let Key::Kem(dk) = key else {
            return Err(Failure::error(format!("not an {} key", alg.name())));
        };
        exact_len("ciphertext", ciphertext, alg.sizes().2.unwrap_or(0))?;
        let shared = dk
            .decapsulate(Ciphertext::from(ciphertext))
            .map_err(|_| failed("decapsulation failed"))?;
        Ok(shared.as_ref().to_vec())
    }

    fn sign(&self, alg: Alg, key: &Key, signed: &Signed, _det: bool) -> Answer<Vec<u8>> {
        no_context(alg, signed)?;
        self.signature(alg, key, &signed.message)
    }

    fn verify(&self, alg: Alg, public: &[u8], signed: &Signed, signature: &[u8]) -> Answer<bool> {
        no_context(alg, signed)?;
        exact_len("public", public, public_len(alg))?;
        let parsed = ParsedPublicKey::new(verification_algorithm(alg), public)
            .map_err(|e| failed(&format!("public key rejected: {e}")))?;
        Ok(parsed.verify_sig(&signed.message, signature).is_ok())
    }

    fn derive(&self, alg: Alg, key: &Key, peer: &[u8]) -> Answer<Vec<u8>> {
        let Key::Agreement(private) = key else {
            return Err(Failure::error(format!("not an {} key", alg.name())));
        };
        exact_len("peer", peer, public_len(alg))?;
        agreement::agree(
            private,
            UnparsedPublicKey::new(agreement_algorithm(alg), peer),
            failed("the peer's public key was rejected or the shared secret is invalid"),
            |secret| Ok(secret.to_vec()),
        )
    }

    fn prepare(&self, alg: Alg, op: Op) -> Answer<Prepared> {
        match alg {
            Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => self.prepare_kem(alg, op),
            Alg::X25519 | Alg::EcdhP256 => self.prepare_agreement(alg, op),
            _ => self.prepare_signature(alg, op),
        }
    }
}

fn main() {
    std::process::exit(serve(AwsLc {
        rng: SystemRandom::new(),
    }));
}
