// KeyFrameKit: the umbrella module. Importing it gives the media core and the AAC bitstream layer,
// the pipelines built on them, and swift-system's `FilePath`, which their paths are.
@_exported public import MediaCore
@_exported public import AACBitstream
@_exported public import AudioBitstreams
@_exported public import PCMAudio
@_exported public import AudioCodec
@_exported public import SpectralBandReplication
@_exported public import MP4
@_exported public import MediaFormats
@_exported public import MediaStreaming
@_exported public import MediaValidation
@_exported public import VideoBitstream
@_exported public import AudioIO
@_exported public import Publishing
@_exported public import SystemPackage
