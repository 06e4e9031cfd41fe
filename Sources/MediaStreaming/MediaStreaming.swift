// MediaStreaming: HLS and DASH for AAC that exists (segmenting, playlists, manifests, packaging
// by stream copy, validation) and the HTTP-free origin that serves it; pure Swift, with
// MediaFormats re-exported.
@_exported public import MediaFormats
