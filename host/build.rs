//! Generates the gRPC client and server for `proto/driver.proto`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto");
    let driver_proto = proto_dir.join("driver.proto");
    println!("cargo:rerun-if-changed={}", driver_proto.display());
    tonic_prost_build::configure().compile_protos(&[driver_proto], &[proto_dir])?;
    Ok(())
}
