//! How the examples (`replay`, `tune`, `bench`) end, shared through `#[path]`.
#![allow(dead_code)]

use std::process::ExitCode;

/// The exit code of `program` whose work returned `result`: 0, or 1 after
/// `<program>: error: <e>` on stderr.
pub fn exit_code(program: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: error: {e}");
            ExitCode::FAILURE
        }
    }
}
