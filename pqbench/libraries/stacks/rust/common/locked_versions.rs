// Build script shared by every worker crate (each crate's build.rs includes this file): the
// versions a worker reports in `hello` come from the crate's Cargo.lock (what cargo resolved
// for this build), never from a hand-written table, and the toolchain from the rustc that
// builds it.
//
// Writes `$OUT_DIR/locked_versions.rs` with `LOCKED: &[(&str, &str)]` (every package of the
// lock file, name and version) and `RUSTC: &str` (`rustc --version` and the target). Where
// the lock holds aws-lc-sys, also `$OUT_DIR/aws_lc_symbols.rs`: AWS-LC's CPU capability
// vector under the symbol prefix aws-lc-sys gives every AWS-LC symbol (`aws_lc_` and its
// version with underscores, its builder's `prefix_string`), so the worker reads the vector
// the library itself dispatches on.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn quoted(line: &str, key: &str) -> Option<String> {
    let rest = line
        .strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    Some(rest.strip_prefix('"')?.strip_suffix('"')?.to_string())
}

/// One `[[package]]` of a Cargo.lock (version 3 or 4): name, version, dependencies.
struct LockedPackage {
    name: String,
    version: String,
    dependencies: Vec<String>,
}

fn locked_packages(lock: &str) -> Vec<LockedPackage> {
    let mut packages: Vec<LockedPackage> = Vec::new();
    let mut in_dependencies = false;
    for line in lock.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            packages.push(LockedPackage {
                name: String::new(),
                version: String::new(),
                dependencies: Vec::new(),
            });
            in_dependencies = false;
        } else if let Some(package) = packages.last_mut() {
            if line.starts_with("dependencies") {
                in_dependencies = true;
            } else if line == "]" {
                in_dependencies = false;
            } else if in_dependencies {
                let entry = line.trim_end_matches(',').trim_matches('"');
                package.dependencies.push(entry.to_string());
            } else if let Some(value) = quoted(line, "name") {
                package.name = value;
            } else if let Some(value) = quoted(line, "version") {
                package.version = value;
            }
        }
    }
    packages.retain(|p| !p.name.is_empty() && !p.version.is_empty());
    packages
}

/// The aws-lc-sys version aws-lc-rs links (a dependency entry is `name` or `name version`
/// when the lock holds several versions of it).
fn linked_aws_lc_sys(packages: &[LockedPackage]) -> Option<String> {
    let aws_lc_rs = packages.iter().find(|p| p.name == "aws-lc-rs")?;
    let entry = aws_lc_rs
        .dependencies
        .iter()
        .find(|d| d.split(' ').next() == Some("aws-lc-sys"))?;
    match entry.split_once(' ') {
        Some((_, version)) => Some(version.to_string()),
        None => packages
            .iter()
            .find(|p| p.name == "aws-lc-sys")
            .map(|p| p.version.clone()),
    }
}

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let lock_path = manifest.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock_path.display());
    println!("cargo:rerun-if-changed=../common/locked_versions.rs");
    let lock = fs::read_to_string(&lock_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", lock_path.display()));
    let packages = locked_packages(&lock);
    assert!(
        !packages.is_empty(),
        "no packages in {}",
        lock_path.display()
    );

    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| "rustc (version unknown)".to_string());
    let target = env::var("TARGET").unwrap_or_default();

    let mut out = String::from("pub const LOCKED: &[(&str, &str)] = &[\n");
    for package in &packages {
        out.push_str(&format!(
            "    ({:?}, {:?}),\n",
            package.name, package.version
        ));
    }
    out.push_str("];\n");
    out.push_str(&format!(
        "pub const RUSTC: &str = {:?};\n",
        format!("{version} {target}")
    ));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out_dir.join("locked_versions.rs"), out).expect("cannot write locked_versions.rs");

    if let Some(sys_version) = linked_aws_lc_sys(&packages) {
        let prefix = format!("aws_lc_{}", sys_version.replace('.', "_"));
        let symbols = format!(
            "extern \"C\" {{\n    \
             #[link_name = \"{prefix}_OPENSSL_ia32cap_P\"]\n    \
             static OPENSSL_ia32cap_P: [u32; 4];\n    \
             #[link_name = \"{prefix}_OpenSSL_version\"]\n    \
             fn OpenSSL_version(which: std::os::raw::c_int) -> *const std::os::raw::c_char;\n\
             }}\n\
             const OPENSSL_VERSION: std::os::raw::c_int = 0;\n"
        );
        fs::write(out_dir.join("aws_lc_symbols.rs"), symbols)
            .expect("cannot write aws_lc_symbols.rs");
    }
    aws_lc_rs_api(&packages);
}

fn major_minor(version: &str) -> (u64, u64) {
    let mut parts = version.split(['.', '-']).map(|p| p.parse::<u64>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// The cfgs that tell aws-lc-rs's APIs apart, from the locked version: a bisect builds the
/// worker against older releases. `aws_lc_rs_kem_import`: `kem::DecapsulationKey::new`
/// (1.16.0); `aws_lc_rs_stable_mldsa`: ML-DSA in `signature` without the unstable feature
/// (1.18.0). Releases before 1.15.0 lack the parsed public keys the worker times with.
/// `aws_lc_mlkem_needs_bmi2`: AWS-LC's mlkem-native x86_64 backend asks for BMI2 beside AVX2
/// (aws-lc-sys 0.46.0, ml_kem/mlkem_native_config.h; AVX2 alone before).
fn aws_lc_rs_api(packages: &[LockedPackage]) {
    println!("cargo:rustc-check-cfg=cfg(aws_lc_rs_kem_import)");
    println!("cargo:rustc-check-cfg=cfg(aws_lc_rs_stable_mldsa)");
    println!("cargo:rustc-check-cfg=cfg(aws_lc_mlkem_needs_bmi2)");
    if let Some(sys_version) = linked_aws_lc_sys(packages) {
        if major_minor(&sys_version) >= (0, 46) {
            println!("cargo:rustc-cfg=aws_lc_mlkem_needs_bmi2");
        }
    }
    let Some(package) = packages.iter().find(|p| p.name == "aws-lc-rs") else {
        return;
    };
    let version = major_minor(&package.version);
    assert!(
        version >= (1, 15),
        "aws-lc-rs {} is older than 1.15.0, the oldest this worker builds against",
        package.version
    );
    if version >= (1, 16) {
        println!("cargo:rustc-cfg=aws_lc_rs_kem_import");
    }
    if version >= (1, 18) {
        println!("cargo:rustc-cfg=aws_lc_rs_stable_mldsa");
    }
}
