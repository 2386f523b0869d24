//! The pqbench stack worker protocol, version 1, shared by every Rust worker.
//!
//! A worker is one long-lived process that speaks one JSON object per line on stdin and
//! stdout (docs/stacks.md in pqbench holds the protocol). This crate owns everything that is
//! the same for every library: the transport, hex, the request checks against what a library
//! offers, the secret-key handles, the prepared rows, the timing loop and the reference
//! binaries' driver ([`reference`]). A worker binary only implements [`Library`] for its
//! crate and calls [`serve`].

mod hex;
mod random;
pub mod reference;
mod server;
mod timing;

pub use hex::{decode_hex, encode_hex};
pub use random::{fill_random, random_array};
pub use server::serve;
pub use timing::{run_round, thread_cpu_ns, Round};

use serde_json::Value;

/// The protocol version this crate speaks (the `protocol` field of `hello`).
pub const PROTOCOL_VERSION: u64 = 1;

/// How many distinct messages a sign or verify row rotates through.
pub const MESSAGES: usize = 64;

/// Length of every message a sign or verify row signs.
pub const MESSAGE_LEN: usize = 32;

/// pqbench's canonical algorithm names (`pqbench list`) that a Rust worker may serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Alg {
    MlKem512,
    MlKem768,
    MlKem1024,
    MlDsa44,
    MlDsa65,
    MlDsa87,
    X25519,
    EcdhP256,
    Ed25519,
    EcdsaP256,
}

/// What an algorithm does, which fixes the operations it can offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Kem,
    Signature,
    KeyAgreement,
}

impl Alg {
    pub const ALL: [Alg; 10] = [
        Alg::MlKem512,
        Alg::MlKem768,
        Alg::MlKem1024,
        Alg::MlDsa44,
        Alg::MlDsa65,
        Alg::MlDsa87,
        Alg::X25519,
        Alg::EcdhP256,
        Alg::Ed25519,
        Alg::EcdsaP256,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Alg::MlKem512 => "ML-KEM-512",
            Alg::MlKem768 => "ML-KEM-768",
            Alg::MlKem1024 => "ML-KEM-1024",
            Alg::MlDsa44 => "ML-DSA-44",
            Alg::MlDsa65 => "ML-DSA-65",
            Alg::MlDsa87 => "ML-DSA-87",
            Alg::X25519 => "X25519",
            Alg::EcdhP256 => "ECDH-P-256",
            Alg::Ed25519 => "Ed25519",
            Alg::EcdsaP256 => "ECDSA-P-256",
        }
    }

    /// The algorithm with this canonical name (exact spelling, as pqbench sends it).
    pub fn from_name(name: &str) -> Option<Alg> {
        Alg::ALL.into_iter().find(|alg| alg.name() == name)
    }

    pub fn kind(self) -> Kind {
        match self {
            Alg::MlKem512 | Alg::MlKem768 | Alg::MlKem1024 => Kind::Kem,
            Alg::MlDsa44 | Alg::MlDsa65 | Alg::MlDsa87 | Alg::Ed25519 | Alg::EcdsaP256 => {
                Kind::Signature
            }
            Alg::X25519 | Alg::EcdhP256 => Kind::KeyAgreement,
        }
    }

    /// Standard sizes in bytes: (public key, secret key, ciphertext or signature), where
    /// the standard fixes them. FIPS 203 table 3 (ek, dk, c); FIPS 204 table 2 (pk, sk,
    /// signature); RFC 7748 and RFC 8032 (32-byte keys, 64-byte Ed25519 signatures); SEC1
    /// for P-256 (65-byte uncompressed point, 32-byte scalar; a DER ECDSA signature has no
    /// fixed length).
    pub fn sizes(self) -> (usize, usize, Option<usize>) {
        match self {
            Alg::MlKem512 => (800, 1632, Some(768)),
            Alg::MlKem768 => (1184, 2400, Some(1088)),
            Alg::MlKem1024 => (1568, 3168, Some(1568)),
            Alg::MlDsa44 => (1312, 2560, Some(2420)),
            Alg::MlDsa65 => (1952, 4032, Some(3309)),
            Alg::MlDsa87 => (2592, 4896, Some(4627)),
            Alg::X25519 => (32, 32, None),
            Alg::Ed25519 => (32, 32, Some(64)),
            Alg::EcdhP256 | Alg::EcdsaP256 => (65, 32, None),
        }
    }

    /// The operations the protocol names for this algorithm's kind.
    pub fn operations(self) -> &'static [Op] {
        match self.kind() {
            Kind::Kem => &[Op::Keygen, Op::Encaps, Op::Decaps],
            Kind::Signature => &[Op::Keygen, Op::Sign, Op::Verify],
            Kind::KeyAgreement => &[Op::Keygen, Op::Derive],
        }
    }
}

/// The `sizes` of a prepared `op` row for `alg`: what travels or is stored (the standard
/// encodings; a sign or verify row adds its messages' length).
pub fn row_sizes(alg: Alg, op: Op) -> Vec<(&'static str, usize)> {
    let (public, secret, third) = alg.sizes();
    let mut sizes = vec![("public_key", public), ("secret_key", secret)];
    match alg.kind() {
        Kind::Kem => sizes.extend([("ciphertext", third.unwrap_or(0)), ("shared_secret", 32)]),
        Kind::Signature => sizes.extend(third.map(|len| ("signature", len))),
        Kind::KeyAgreement => sizes.push(("shared_secret", 32)),
    }
    if matches!(op, Op::Sign | Op::Verify) {
        sizes.push(("message", MESSAGE_LEN));
    }
    sizes
}

/// How a row's keys are held while it is timed: `key_form` for the secret key an operation
/// uses or makes (`seed`, `expanded`, `object`), `public_key_form` for the public key it
/// takes (`object`: parsed once, outside the clock; `encoded`: the bytes, decoded by every
/// call).
pub fn key_attributes(
    op: Op,
    secret: &'static str,
    public: &'static str,
) -> Vec<(&'static str, Value)> {
    let mut attributes = Vec::new();
    if !matches!(op, Op::Encaps | Op::Verify) {
        attributes.push(("key_form", Value::from(secret)));
    }
    if matches!(op, Op::Encaps | Op::Verify | Op::Derive) {
        attributes.push(("public_key_form", Value::from(public)));
    }
    attributes
}

/// FIPS 203 section 7.1: an expanded ML-KEM decapsulation key is
/// dk_PKE (384k bytes) || ek (384k + 32 bytes) || H(ek) || z; this is its ek.
pub fn ek_inside_dk(alg: Alg, dk: &[u8]) -> Option<Vec<u8>> {
    let (ek_len, dk_len, _) = alg.sizes();
    if alg.kind() != Kind::Kem || dk.len() != dk_len {
        return None;
    }
    let start = ek_len - 32;
    Some(dk[start..start + ek_len].to_vec())
}

/// A timed (and checked) operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Keygen,
    Encaps,
    Decaps,
    Sign,
    Verify,
    Derive,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Keygen => "keygen",
            Op::Encaps => "encaps",
            Op::Decaps => "decaps",
            Op::Sign => "sign",
            Op::Verify => "verify",
            Op::Derive => "derive",
        }
    }

    pub fn from_name(name: &str) -> Option<Op> {
        [
            Op::Keygen,
            Op::Encaps,
            Op::Decaps,
            Op::Sign,
            Op::Verify,
            Op::Derive,
        ]
        .into_iter()
        .find(|op| op.name() == name)
    }
}

/// The optional inputs a library's API may accept (the `features` of `hello`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// `keygen` takes `seed` (FIPS 203 d||z, FIPS 204 xi, RFC 7748 / RFC 8032 private keys,
    /// or the SEC1 big-endian private scalar for P-256).
    SeededKeygen,
    /// `encaps` takes `random` (FIPS 203 ML-KEM.Encaps_internal's m).
    DerandomizedEncaps,
    /// `sign` takes `"deterministic": true` (FIPS 204 deterministic variant, rnd = 0^32).
    DeterministicSign,
    /// `import` takes an expanded secret key (FIPS 203 dk, FIPS 204 sk).
    ImportExpanded,
}

impl Feature {
    pub fn name(self) -> &'static str {
        match self {
            Feature::SeededKeygen => "seeded_keygen",
            Feature::DerandomizedEncaps => "derandomized_encaps",
            Feature::DeterministicSign => "deterministic_sign",
            Feature::ImportExpanded => "import_expanded",
        }
    }
}

/// What a worker says about one algorithm it offers.
pub struct Offer {
    pub alg: Alg,
    /// The library (a key of [`Hello::libraries`]) that serves it.
    pub library: &'static str,
    pub features: Vec<Feature>,
    /// The CPU code path the library chose on this machine (`avx2`, `portable`, ...).
    pub code_path: String,
}

/// The facts of the `hello` line that depend on the library.
pub struct Hello {
    pub implementation: &'static str,
    /// The Rust toolchain the worker was built with.
    pub runtime: String,
    /// Every library version that matters, as resolved by the build.
    pub libraries: Vec<(String, String)>,
    pub offers: Vec<Offer>,
}

/// A request the library cannot answer with a result.
#[derive(Debug)]
pub enum Failure {
    /// The request was malformed or the library failed: an `error` reply.
    Error(String),
    /// The library does not offer this: a `problem` reply of kind `not_offered`.
    NotOffered(String),
}

impl Failure {
    pub fn error(message: impl Into<String>) -> Failure {
        Failure::Error(message.into())
    }

    pub fn not_offered(reason: impl Into<String>) -> Failure {
        Failure::NotOffered(reason.into())
    }
}

pub type Answer<T> = Result<T, Failure>;

/// A key pair made inside the worker: the secret stays here, the public key is returned.
pub struct NewKey<K> {
    pub secret: K,
    /// The standard public encoding; `None` where the library cannot derive it (import).
    pub public: Option<Vec<u8>>,
}

/// A prepared row: everything the timed operation needs, made outside the clock.
pub struct Prepared {
    /// Bytes that travel or are stored (`public_key`, `secret_key`, `ciphertext`, ...).
    pub sizes: Vec<(&'static str, usize)>,
    /// Facts that change the speed and are stored with the row.
    pub attributes: Vec<(&'static str, Value)>,
    pub timed: Box<dyn Timed>,
}

/// An operation that can be timed for a round.
pub trait Timed {
    fn round(&mut self, seconds: f64) -> Round;
}

struct Looped<F>(F);

impl<F, R> Timed for Looped<F>
where
    F: FnMut() -> R,
{
    fn round(&mut self, seconds: f64) -> Round {
        run_round(&mut self.0, seconds)
    }
}

/// Wraps one operation for the timing loop. The closure's result goes through
/// `std::hint::black_box`, so the work is never elided; it must not panic.
pub fn timed<F, R>(operation: F) -> Box<dyn Timed>
where
    F: FnMut() -> R + 'static,
    R: 'static,
{
    Box::new(Looped(operation))
}

/// `count` distinct random messages of [`MESSAGE_LEN`] bytes, for sign and verify rows.
pub fn random_messages(count: usize) -> Vec<[u8; MESSAGE_LEN]> {
    let mut messages: Vec<[u8; MESSAGE_LEN]> = Vec::with_capacity(count);
    while messages.len() < count {
        let candidate = random_array::<MESSAGE_LEN>();
        if !messages.contains(&candidate) {
            messages.push(candidate);
        }
    }
    messages
}

/// What a signature covers: the message and the context string ctx of FIPS 204 (section 5.2,
/// ML-DSA.Sign(sk, M, ctx)), empty unless the request gives one.
pub struct Signed {
    pub message: Vec<u8>,
    pub context: Vec<u8>,
}

impl Signed {
    /// Refuses a context string, as not offered and saying `why`, where the API signs the
    /// message alone (RFC 8032 pure Ed25519, or an ML-DSA API without ctx).
    pub fn without_context(&self, why: impl FnOnce() -> String) -> Answer<()> {
        if self.context.is_empty() {
            Ok(())
        } else {
            Err(Failure::not_offered(why()))
        }
    }
}

/// One library behind the protocol. The server has already checked that `alg` and the
/// operation are offered and that every optional input is allowed by the offer's features;
/// every other check (lengths, encodings, context support) is the library's.
pub trait Library {
    /// A secret key held inside the worker, referred to by a handle.
    type Key;

    fn hello(&self) -> Hello;
    fn keygen(&self, alg: Alg, seed: Option<&[u8]>) -> Answer<NewKey<Self::Key>>;
    fn import(&self, alg: Alg, secret: &[u8]) -> Answer<NewKey<Self::Key>>;
    /// Returns (ciphertext, shared secret).
    fn encaps(&self, alg: Alg, public: &[u8], random: Option<&[u8]>) -> Answer<(Vec<u8>, Vec<u8>)>;
    fn decaps(&self, alg: Alg, key: &Self::Key, ciphertext: &[u8]) -> Answer<Vec<u8>>;
    fn sign(
        &self,
        alg: Alg,
        key: &Self::Key,
        signed: &Signed,
        deterministic: bool,
    ) -> Answer<Vec<u8>>;
    /// A wrong or malformed signature is `Ok(false)`, never a failure.
    fn verify(&self, alg: Alg, public: &[u8], signed: &Signed, signature: &[u8]) -> Answer<bool>;
    fn derive(&self, alg: Alg, key: &Self::Key, peer: &[u8]) -> Answer<Vec<u8>>;
    fn prepare(&self, alg: Alg, op: Op) -> Answer<Prepared>;
}

/// The version of `name` in the build's Cargo.lock table (see common/locked_versions.rs);
/// every version the lock holds, joined, if it holds several.
pub fn locked_version(locked: &[(&str, &str)], name: &str) -> String {
    let versions: Vec<&str> = locked
        .iter()
        .filter(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .collect();
    if versions.is_empty() {
        "unknown".to_string()
    } else {
        versions.join(", ")
    }
}
