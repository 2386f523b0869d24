//! Randomness from the operating system (getrandom(2)), for messages, seeds and the per-
//! operation randomness of derandomized APIs.

/// Fills `buffer` from getrandom(2). Aborts the process if the kernel refuses: a worker
/// without randomness must not go on to make keys.
pub fn fill_random(buffer: &mut [u8]) {
    let mut filled = 0;
    while filled < buffer.len() {
        let rest = &mut buffer[filled..];
        // SAFETY: the pointer and length describe the writable tail of `buffer`.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if got < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            eprintln!("getrandom failed: {error}");
            std::process::abort();
        }
        filled += got as usize;
    }
}

/// `N` fresh random bytes.
pub fn random_array<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    fill_random(&mut out);
    out
}
