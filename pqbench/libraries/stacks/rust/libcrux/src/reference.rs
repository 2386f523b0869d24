//! A plain benchmark of libcrux's documented API, without the worker: the reference that
//! pqbench's fidelity benchmark pairs with the worker's rows.
//!
//! The arguments, the round and the output line are the common crate's
//! (`pqbench_stack_common::reference`): one call of the API per iteration, with fresh OS
//! randomness where the API takes randomness. Inputs (keys, a ciphertext, one message and its
//! signature) are made before the loop.

use std::hint::black_box;
use std::process::ExitCode;

use pqbench_stack_common::random_array;
use pqbench_stack_common::reference::reference_main;

/// One timed call; it passes its whole result to `black_box`, so nothing is elided.
type Op = Box<dyn FnMut()>;

macro_rules! mlkem_op {
    ($module:ident, $op:expr) => {{
        use libcrux_ml_kem::$module as kem;
        let pair = kem::generate_key_pair(random_array());
        let public = pair.public_key().clone();
        let (ciphertext, _) = kem::encapsulate(&public, random_array());
        let secret = pair.private_key().clone();
        let op: Option<Op> = match $op {
            "keygen" => Some(Box::new(|| {
                black_box(kem::generate_key_pair(random_array()));
            })),
            "encaps" => Some(Box::new(move || {
                black_box(kem::encapsulate(&public, random_array()));
            })),
            "decaps" => Some(Box::new(move || {
                black_box(kem::decapsulate(&secret, &ciphertext));
            })),
            _ => None,
        };
        op
    }};
}

macro_rules! mldsa_op {
    ($module:ident, $op:expr) => {{
        use libcrux_ml_dsa::$module as dsa;
        let message = [0x5au8; 32];
        let pair = dsa::generate_key_pair(random_array());
        let signature = dsa::sign(&pair.signing_key, &message, b"", random_array()).unwrap();
        let op: Option<Op> = match $op {
            "keygen" => Some(Box::new(|| {
                black_box(dsa::generate_key_pair(random_array()));
            })),
            "sign" => Some(Box::new(move || {
                black_box(dsa::sign(&pair.signing_key, &message, b"", random_array()).unwrap());
            })),
            "verify" => Some(Box::new(move || {
                black_box(dsa::verify(&pair.verification_key, &message, b"", &signature).is_ok());
            })),
            _ => None,
        };
        op
    }};
}

fn x25519_op(op: &str) -> Option<Op> {
    let public_of = |secret: &[u8; 32]| {
        let mut public = [0u8; 32];
        libcrux_curve25519::secret_to_public(&mut public, secret);
        public
    };
    match op {
        "keygen" => Some(Box::new(move || {
            let secret: [u8; 32] = random_array();
            black_box((public_of(&secret), secret));
        })),
        "derive" => {
            let secret: [u8; 32] = random_array();
            let peer = public_of(&random_array());
            Some(Box::new(move || {
                let mut shared = [0u8; 32];
                black_box(libcrux_curve25519::ecdh(&mut shared, &peer, &secret).is_ok());
                black_box(shared);
            }))
        }
        _ => None,
    }
}

fn ed25519_op(op: &str) -> Option<Op> {
    let message = [0x5au8; 32];
    let secret: [u8; 32] = random_array();
    let mut public = [0u8; 32];
    libcrux_ed25519::secret_to_public(&mut public, &secret);
    let signature = libcrux_ed25519::sign(&message, &secret).ok()?;
    match op {
        "keygen" => Some(Box::new(|| {
            let secret: [u8; 32] = random_array();
            let mut public = [0u8; 32];
            libcrux_ed25519::secret_to_public(&mut public, &secret);
            black_box((public, secret));
        })),
        "sign" => Some(Box::new(move || {
            black_box(libcrux_ed25519::sign(&message, &secret).unwrap());
        })),
        "verify" => Some(Box::new(move || {
            black_box(libcrux_ed25519::verify(&message, &public, &signature).is_ok());
        })),
        _ => None,
    }
}

fn operation(alg: &str, op: &str) -> Option<Op> {
    match alg {
        "ML-KEM-512" => mlkem_op!(mlkem512, op),
        "ML-KEM-768" => mlkem_op!(mlkem768, op),
        "ML-KEM-1024" => mlkem_op!(mlkem1024, op),
        "ML-DSA-44" => mldsa_op!(ml_dsa_44, op),
        "ML-DSA-65" => mldsa_op!(ml_dsa_65, op),
        "ML-DSA-87" => mldsa_op!(ml_dsa_87, op),
        "X25519" => x25519_op(op),
        "Ed25519" => ed25519_op(op),
        _ => None,
    }
}

fn main() -> ExitCode {
    reference_main("libcrux", operation)
}
