//! Compiles sentencepiece's protobuf messages (proto/*.proto) to Rust with prost-build; protox,
//! a protobuf compiler written in Rust, parses them, so no `protoc` is needed.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/sentencepiece_model.proto", "proto/sentencepiece.proto"];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    prost_build::Config::new()
        // The piece type is the Unigram model's own enum, which carries the proto's numbering.
        .extern_path(
            ".sentencepiece.ModelProto.SentencePiece.Type",
            "crate::models::unigram::PieceType",
        )
        .compile_fds(descriptors)?;
    Ok(())
}
