// MediaFormats: the files KeyFrameKit reads and writes, as pipeline sources and sinks (the format
// table, AAC packets in and out of ADTS and MP4, PCM files), over the pure-Swift bitstream and
// container modules it re-exports with swift-system's `FilePath`.
@_exported public import MediaCore
@_exported public import AACBitstream
@_exported public import PCMAudio
@_exported public import MP4
@_exported public import VideoBitstream
@_exported public import SystemPackage
