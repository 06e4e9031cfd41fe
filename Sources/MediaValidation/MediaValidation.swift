// MediaValidation: the rules KeyFrameKit checks a package against — HLS playlists (RFC 8216 and
// Apple's HLS authoring specification), DASH manifests (ISO/IEC 23009-1) and the media they
// name — and the file checks of `keyframe validate`, which call MP4's box rules
// (`GaplessValidation`, `SegmentSequenceValidation`). Pure Swift, MediaFormats re-exported.
@_exported public import MediaFormats
