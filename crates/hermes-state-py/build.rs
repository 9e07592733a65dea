//! The extension never links libpython (`PYO3_BUILD_EXTENSION_MODULE`), so
//! on macOS its Python symbols must be left for the interpreter to resolve
//! at load time; pyo3's own helper says so to the linker (a no-op on Linux).
//! maturin passes the same arguments; this keeps a plain `cargo build` of
//! the workspace linking there too.

fn main() {
    pyo3_build_config::add_extension_module_link_args();
}
