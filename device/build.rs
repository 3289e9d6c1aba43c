//! Generates the gRPC client and server for `proto/driver.proto`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time, not with `env!`: a build script compiled in one checkout and
    // reused from a copied target directory must still look at this checkout.
    let proto_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../proto");
    let driver_proto = proto_dir.join("driver.proto");
    println!("cargo:rerun-if-changed={}", driver_proto.display());
    tonic_prost_build::configure().compile_protos(&[driver_proto], &[proto_dir])?;
    Ok(())
}
