//! The transport: read one request per line, answer one line per request, in order.
//!
//! Nothing but protocol lines is written to stdout; diagnostics go to stderr. A request that
//! cannot be read, names an unknown type, or lacks a field gets an `error` reply; what the
//! library does not offer gets a `problem` reply; a panic inside a library call becomes an
//! `error` reply too, so one bad request never ends the worker. End of input, `quit`, or a
//! controller that stopped reading end the worker with status 0.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::{json, Map, Value};

use crate::hex::{decode_hex, encode_hex};
use crate::{
    Alg, Answer, Failure, Feature, Hello, Library, NewKey, Op, Prepared, Signed, PROTOCOL_VERSION,
};

/// No line in either direction is longer than this (the protocol's limit).
const MAX_LINE: usize = 1 << 20;

/// The longest round a `run` may ask for (the protocol's bound).
const MAX_SECONDS: f64 = 600.0;

struct Server<L: Library> {
    library: L,
    hello: Hello,
    keys: HashMap<String, (Alg, L::Key)>,
    next_key: u64,
    rows: HashMap<String, Prepared>,
}

/// Serves `library` on stdin and stdout until `quit` or end of input; returns the exit status.
pub fn serve<L: Library>(library: L) -> i32 {
    // A panic is answered as an error reply (below); its default report on stderr stays.
    let hello = library.hello();
    let mut server = Server {
        library,
        hello,
        keys: HashMap::new(),
        next_key: 1,
        rows: HashMap::new(),
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut output = stdout.lock();
    if write_line(&mut output, &server.hello_line()).is_err() {
        return 0;
    }
    let mut line: Vec<u8> = Vec::new();
    loop {
        line.clear();
        let reply = match read_line(&mut input, &mut line) {
            Ok(Line::End) => return 0,
            Ok(Line::TooLong) => error(&format!("request line longer than {MAX_LINE} bytes")),
            Ok(Line::Complete) => match parse_request(&line) {
                Ok(request) => {
                    if request.get("type").and_then(Value::as_str) == Some("quit") {
                        return 0;
                    }
                    match catch_unwind(AssertUnwindSafe(|| server.answer(&request))) {
                        Ok(reply) => reply,
                        Err(_) => error("the worker failed on this request (a panic; see stderr)"),
                    }
                }
                Err(message) => error(&message),
            },
            Err(io_error) => {
                eprintln!("reading stdin failed: {io_error}");
                return 0;
            }
        };
        if write_line(&mut output, &reply).is_err() {
            // The controller stopped reading: nobody is left to answer.
            return 0;
        }
    }
}

enum Line {
    Complete,
    TooLong,
    End,
}

/// Reads one line into `buffer` (without its newline), discarding the rest of a line longer
/// than the protocol allows.
fn read_line(input: &mut impl BufRead, buffer: &mut Vec<u8>) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            // End of input; a last line without a newline is ignored (the writer died mid-line).
            return Ok(Line::End);
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], Some(at)),
            None => (available, None),
        };
        if !too_long {
            // MAX_LINE counts the newline: a line's text is at most MAX_LINE - 1 bytes.
            if buffer.len() + chunk.len() >= MAX_LINE {
                too_long = true;
                buffer.clear();
            } else {
                buffer.extend_from_slice(chunk);
            }
        }
        let used = match found {
            Some(at) => at + 1,
            None => available.len(),
        };
        input.consume(used);
        if found.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

fn parse_request(line: &[u8]) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(line).map_err(|_| "request is not UTF-8".to_string())?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("request is not a JSON object".to_string()),
        Err(e) => Err(format!("request is not JSON: {e}")),
    }
}

fn write_line(output: &mut impl Write, reply: &Value) -> std::io::Result<()> {
    let mut text = reply.to_string();
    if text.len() >= MAX_LINE {
        text = error("reply longer than the protocol's line limit").to_string();
    }
    text.push('\n');
    output.write_all(text.as_bytes())?;
    output.flush()
}

fn error(message: &str) -> Value {
    json!({"type": "error", "message": message})
}

fn problem(reason: &str) -> Value {
    json!({"type": "problem", "kind": "not_offered", "reason": reason})
}

fn field<'a>(request: &'a Map<String, Value>, name: &str) -> Answer<&'a Value> {
    request
        .get(name)
        .ok_or_else(|| Failure::error(format!("missing field '{name}'")))
}

fn text_field<'a>(request: &'a Map<String, Value>, name: &str) -> Answer<&'a str> {
    field(request, name)?
        .as_str()
        .ok_or_else(|| Failure::error(format!("field '{name}' is not a string")))
}

fn bytes_field(request: &Map<String, Value>, name: &str) -> Answer<Vec<u8>> {
    decode_hex(text_field(request, name)?)
        .map_err(|why| Failure::error(format!("field '{name}' is not hex: {why}")))
}

/// An optional hex field: absent and null both mean "not given".
fn optional_bytes(request: &Map<String, Value>, name: &str) -> Answer<Option<Vec<u8>>> {
    match request.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => bytes_field(request, name).map(Some),
    }
}

/// What sign and verify read alike: the message, and the context string (empty if not given).
fn signed_fields(request: &Map<String, Value>) -> Answer<Signed> {
    Ok(Signed {
        message: bytes_field(request, "message")?,
        context: optional_bytes(request, "context")?.unwrap_or_default(),
    })
}

fn optional_bool(request: &Map<String, Value>, name: &str) -> Answer<bool> {
    match request.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(value)) => Ok(*value),
        Some(_) => Err(Failure::error(format!("field '{name}' is not a boolean"))),
    }
}

/// The controller's name for a row.
fn row_name(request: &Map<String, Value>) -> Answer<String> {
    text_field(request, "row").map(str::to_string)
}

fn hex_or_null(bytes: &Option<Vec<u8>>) -> Value {
    match bytes {
        Some(bytes) => Value::String(encode_hex(bytes)),
        None => Value::Null,
    }
}

impl<L: Library> Server<L> {
    fn hello_line(&self) -> Value {
        let hello = &self.hello;
        let mut libraries = Map::new();
        for (name, version) in &hello.libraries {
            libraries.insert(name.clone(), Value::String(version.clone()));
        }
        let (mut offers, mut features, mut code_paths, mut library_of) =
            (Map::new(), Map::new(), Map::new(), Map::new());
        for offer in &hello.offers {
            let name = offer.alg.name().to_string();
            let ops: Vec<&str> = offer.alg.operations().iter().map(|op| op.name()).collect();
            offers.insert(name.clone(), json!(ops));
            let names: Vec<&str> = offer.features.iter().map(|f| f.name()).collect();
            features.insert(name.clone(), json!(names));
            code_paths.insert(name.clone(), json!(offer.code_path));
            library_of.insert(name, json!(offer.library));
        }
        json!({
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "implementation": hello.implementation,
            "runtime": hello.runtime,
            "libraries": libraries,
            "offers": offers,
            "features": features,
            "code_paths": code_paths,
            "library_of": library_of,
            "pid": std::process::id(),
        })
    }

    fn answer(&mut self, request: &Map<String, Value>) -> Value {
        let result = match request.get("type").and_then(Value::as_str) {
            Some("keygen") => self.keygen(request),
            Some("import") => self.import(request),
            Some("encaps") => self.encaps(request),
            Some("decaps") => self.decaps(request),
            Some("sign") => self.sign(request),
            Some("verify") => self.verify(request),
            Some("derive") => self.derive(request),
            Some("prepare") => self.prepare(request),
            Some("run") => self.run(request),
            Some(other) => Err(Failure::error(format!("unknown request type '{other}'"))),
            None => Err(Failure::error("missing field 'type'")),
        };
        match result {
            Ok(reply) => reply,
            Err(Failure::Error(message)) => error(&message),
            Err(Failure::NotOffered(reason)) => problem(&reason),
        }
    }

    /// The algorithm of the request, if offered here with `op`.
    fn offered(&self, request: &Map<String, Value>, op: Option<Op>) -> Answer<Alg> {
        let name = text_field(request, "alg")?;
        let alg = self
            .hello
            .offers
            .iter()
            .map(|offer| offer.alg)
            .find(|alg| alg.name() == name)
            .ok_or_else(|| {
                Failure::not_offered(format!(
                    "{} does not offer the algorithm '{}'",
                    self.hello.implementation,
                    name.escape_debug()
                ))
            })?;
        if let Some(op) = op {
            if !alg.operations().contains(&op) {
                return Err(Failure::not_offered(format!(
                    "{} has no operation '{}'",
                    alg.name(),
                    op.name()
                )));
            }
        }
        Ok(alg)
    }

    fn require(&self, alg: Alg, feature: Feature, what: &str) -> Answer<()> {
        let offer = self.hello.offers.iter().find(|offer| offer.alg == alg);
        if offer.is_some_and(|offer| offer.features.contains(&feature)) {
            Ok(())
        } else {
            Err(Failure::not_offered(format!(
                "{}'s {} API does not accept {} (feature {})",
                self.hello.implementation,
                alg.name(),
                what,
                feature.name()
            )))
        }
    }

    fn key(&self, request: &Map<String, Value>, alg: Alg) -> Answer<&L::Key> {
        let handle = text_field(request, "key")?;
        match self.keys.get(handle) {
            Some((key_alg, key)) if *key_alg == alg => Ok(key),
            Some((key_alg, _)) => Err(Failure::error(format!(
                "key '{}' is a {} key, not {}",
                handle.escape_debug(),
                key_alg.name(),
                alg.name()
            ))),
            None => Err(Failure::error(format!(
                "no key '{}'",
                handle.escape_debug()
            ))),
        }
    }

    fn keep(&mut self, alg: Alg, key: NewKey<L::Key>) -> Value {
        let handle = format!("k{}", self.next_key);
        self.next_key += 1;
        self.keys.insert(handle.clone(), (alg, key.secret));
        json!({"type": "key", "key": handle, "public": hex_or_null(&key.public)})
    }

    fn keygen(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let alg = self.offered(request, Some(Op::Keygen))?;
        let seed = optional_bytes(request, "seed")?;
        if seed.is_some() {
            self.require(alg, Feature::SeededKeygen, "a seed")?;
        }
        let key = self.library.keygen(alg, seed.as_deref())?;
        Ok(self.keep(alg, key))
    }

    fn import(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let alg = self.offered(request, None)?;
        self.require(alg, Feature::ImportExpanded, "an expanded secret key")?;
        let secret = bytes_field(request, "secret")?;
        let key = self.library.import(alg, &secret)?;
        Ok(self.keep(alg, key))
    }

    fn encaps(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let alg = self.offered(request, Some(Op::Encaps))?;
        let public = bytes_field(request, "public")?;
        let random = optional_bytes(request, "random")?;
        if random.is_some() {
            self.require(alg, Feature::DerandomizedEncaps, "caller randomness")?;
        }
        let (ciphertext, shared) = self.library.encaps(alg, &public, random.as_deref())?;
        Ok(
            json!({"type": "encapsulated", "ciphertext": encode_hex(&ciphertext),
                  "shared_secret": encode_hex(&shared)}),
        )
    }

    fn decaps(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let alg = self.offered(request, Some(Op::Decaps))?;
        let ciphertext = bytes_field(request, "ciphertext")?;
        let key = self.key(request, alg)?;
        let shared = self.library.decaps(alg, key, &ciphertext)?;
        Ok(json!({"type": "decapsulated", "shared_secret": encode_hex(&shared)}))
    }

    fn sign(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let alg = self.offered(request, Some(Op::Sign))?;
        let signed = signed_fields(request)?;
        let deterministic = optional_bool(request, "deterministic")?;
        // Ed25519 (RFC 8032) is deterministic by construction: nothing to ask of the API.
        if deterministic && alg != Alg::Ed25519 {
            self.require(alg, Feature::DeterministicSign, "deterministic signing")?;
        }
        let key = self.key(request, alg)?;
        let signature = self.library.sign(alg, key, &signed, deterministic)?;
        Ok(json!({"type": "signed", "signature": encode_hex(&signature)}))
    }

    fn verify(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let alg = self.offered(request, Some(Op::Verify))?;
        let public = bytes_field(request, "public")?;
        let signed = signed_fields(request)?;
        let signature = bytes_field(request, "signature")?;
        let valid = self.library.verify(alg, &public, &signed, &signature)?;
        Ok(json!({"type": "verified", "valid": valid}))
    }

    fn derive(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let alg = self.offered(request, Some(Op::Derive))?;
        let peer = bytes_field(request, "peer")?;
        let key = self.key(request, alg)?;
        let shared = self.library.derive(alg, key, &peer)?;
        Ok(json!({"type": "derived", "shared_secret": encode_hex(&shared)}))
    }

    fn prepare(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let row = row_name(request)?;
        let name = text_field(request, "operation")?;
        let op = Op::from_name(name).ok_or_else(|| {
            Failure::error(format!("unknown operation '{}'", name.escape_debug()))
        })?;
        let alg = self.offered(request, Some(op))?;
        let prepared = self.library.prepare(alg, op)?;
        let sizes: Map<String, Value> = prepared
            .sizes
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let attributes: Map<String, Value> = prepared
            .attributes
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        self.rows.insert(row.clone(), prepared);
        Ok(json!({"type": "prepared", "row": row, "sizes": sizes, "attributes": attributes}))
    }

    fn run(&mut self, request: &Map<String, Value>) -> Answer<Value> {
        let row = row_name(request)?;
        let seconds = field(request, "seconds")?
            .as_f64()
            .ok_or_else(|| Failure::error("field 'seconds' is not a number"))?;
        if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
            return Err(Failure::error(format!(
                "field 'seconds' must be above 0 and at most {MAX_SECONDS}"
            )));
        }
        let prepared = self
            .rows
            .get_mut(&row)
            .ok_or_else(|| Failure::error(format!("no prepared row '{}'", row.escape_debug())))?;
        let round = prepared.timed.round(seconds);
        Ok(
            json!({"type": "round", "row": row, "ops": round.ops, "wall_ns": round.wall_ns,
                  "thread_cpu_ns": round.thread_cpu_ns, "process_cpu_ns": round.process_cpu_ns}),
        )
    }
}
