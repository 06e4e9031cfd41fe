// swift-tools-version:6.1
// KeyFrameKit: capture → encode → mux → demux → decode → play, for audio, in Swift.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "KeyFrameKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "KeyFrameKit", targets: ["KeyFrameKit"]),
        // Packaging and serving existing AAC (HLS, DASH, the HTTP-free origin): pure Swift, no
        // ALSA, libavcodec or libebur128.
        .library(name: "MediaStreaming", targets: ["MediaStreaming"]),
        // Validating files and packages (HLS, DASH, and MP4 through MP4's box rules): pure Swift.
        .library(name: "MediaValidation", targets: ["MediaValidation"]),
        .library(name: "MediaFormats", targets: ["MediaFormats"]),
        .library(name: "MediaCore", targets: ["MediaCore"]),
        .library(name: "AACBitstream", targets: ["AACBitstream"]),
        .library(name: "AudioBitstreams", targets: ["AudioBitstreams"]),
        .library(name: "PCMAudio", targets: ["PCMAudio"]),
        .library(name: "VideoBitstream", targets: ["VideoBitstream"]),
        .library(name: "MP4", targets: ["MP4"]),
        .library(name: "AudioCodec", targets: ["AudioCodec"]),
        .library(name: "SpectralBandReplication", targets: ["SpectralBandReplication"]),
        .library(name: "HLSServer", targets: ["HLSServer"]),
        .library(name: "MPEGTS", targets: ["MPEGTS"]),
        .library(name: "Publishing", targets: ["Publishing"]),
        .library(name: "ObjectStorage", targets: ["ObjectStorage"]),
        .library(name: "RTMP", targets: ["RTMP"]),
        .executable(name: "keyframe", targets: ["keyframe"]),
        .executable(name: "keyframe-serve", targets: ["keyframe-serve"]),
        .executable(name: "keyframe-fuzz", targets: ["keyframe-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.1.0"),
        // The low-latency HLS server (HLSServer): HTTP on SwiftNIO through Hummingbird.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // Hummingbird's own: the origin's header deadline is a NIO channel handler on HTTP parts.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        // Publishing live (RTMP, Icecast) over TCP and TLS (rtmps://, icecasts://).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        // Object stores over HTTP (S3): AWS Signature Version 4 on swift-crypto's HMAC, requests
        // through async-http-client.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0" ..< "5.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.24.0"),
        // Examples/serve-vapor only (an executable target, no product: a package that depends on
        // KeyFrameKit does not resolve it).
        .package(url: "https://github.com/vapor/vapor", from: "4.100.0"),
        // `make docs` (swift package generate-documentation); a command plugin, never linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Pure Swift: no C modules below this line until the codec and ALSA targets.
        .target(
            name: "MediaCore",
            dependencies: [.product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        .target(name: "AACBitstream", dependencies: ["MediaCore"], swiftSettings: strict),
        // The headers and configurations of MP3, Opus, FLAC and ALAC, and their ISO BMFF
        // descriptions: pure Swift, fuzzed like AACBitstream.
        .target(name: "AudioBitstreams", dependencies: ["MediaCore"], swiftSettings: strict),
        .target(
            name: "PCMAudio",
            dependencies: ["MediaCore", .product(name: "RealModule", package: "swift-numerics")],
            swiftSettings: strict
        ),
        .target(name: "VideoBitstream", dependencies: ["MediaCore"], swiftSettings: strict),
        // The container sits above the bitstreams it carries: AAC (esds) and H.264/HEVC (avcC/hvcC).
        .target(name: "MP4", dependencies: ["MediaCore", "AACBitstream", "VideoBitstream", .product(name: "SystemPackage", package: "swift-system")],
                swiftSettings: strict),
        // The files as sources and sinks: the format table, AAC packets in and out of ADTS and
        // MP4, PCM files, splicing.
        .target(name: "MediaFormats", dependencies: ["MediaCore", "AACBitstream", "AudioBitstreams", "PCMAudio", "MP4", "VideoBitstream",
                                                    .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        // MPEG-2 transport stream (ISO/IEC 13818-1): AAC in PES over TS packets, what SRT carries.
        .target(name: "MPEGTS", dependencies: ["MediaCore", "AACBitstream", "AudioBitstreams"], swiftSettings: strict),
        // RTMP's wire formats (AMF0, the handshake, chunk streams, messages, FLV audio tags) and a
        // publishing session as a state machine over bytes: pure Swift, no sockets.
        .target(name: "RTMP", dependencies: ["MediaCore"], swiftSettings: strict),
        // HLS and DASH: segmenting, playlists and manifests, packaging by stream copy, the
        // origin (HTTP semantics without an HTTP framework).
        // (MP4 is listed though no file imports it: DocC resolves a symbol link, ``/MP4/MP4Muxer``,
        // only into a direct dependency.)
        // The origin's player page is a resource embedded in the code: an installed binary carries it.
        .target(name: "MediaStreaming", dependencies: ["MediaFormats", "MediaCore", "MP4", "MPEGTS", "AudioBitstreams", "AACBitstream", .product(name: "SystemPackage", package: "swift-system")],
                resources: [.embedInCode("Resources/player.html")], swiftSettings: strict),
        // A bounded XML 1.0 reader of our own (an MPD's), fuzzed by the `mpd` target (tree, text, read back).
        .target(name: "XMLReader", dependencies: ["MediaCore"], swiftSettings: strict),
        // The validation rules of HLS playlists, DASH manifests and the media they name, and the
        // file checks of `keyframe validate` (MP4's box rules stay in MP4, beside the boxes).
        .target(name: "MediaValidation", dependencies: ["MediaFormats", "MediaCore", "MP4", "XMLReader",
                                                       .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),

        // The SBR encoder of HE-AAC (ISO/IEC 14496-3 4.6.18; 3GPP TS 26.404): the QMF analysis,
        // the half-band decimator for the LC core, the envelope, noise and grid estimation. Pure
        // Swift; the bitstream syntax it fills in lives in AACBitstream.
        .target(name: "SpectralBandReplication", dependencies: ["MediaCore", "AACBitstream",
                                                               .product(name: "RealModule", package: "swift-numerics")],
                swiftSettings: strict),

        // FFmpeg's codec, bound lazily with dlopen (headers from libavcodec-dev / libavutil-dev):
        // commands that never encode or decode never load libavcodec's ~110 libraries.
        .target(name: "CFFmpeg", linkerSettings: [.linkedLibrary("dl")]),
        // libFLAC, bound lazily with dlopen (headers from libflac-dev): true 32-bit FLAC, which
        // FFmpeg 5.1 cannot decode.
        .target(name: "CFLAC", linkerSettings: [.linkedLibrary("dl")]),
        .systemLibrary(name: "CEBUR128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        .target(name: "AudioCodec", dependencies: ["CFFmpeg", "CFLAC", "CEBUR128", "MediaCore", "AACBitstream", "AudioBitstreams", "PCMAudio", "SpectralBandReplication",
                                                  .product(name: "RealModule", package: "swift-numerics"), .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),

        // libsrt, bound lazily with dlopen (headers from libsrt-openssl-dev).
        .target(name: "CSRT", linkerSettings: [.linkedLibrary("dl")]),
        // Publishing live to servers: RTMP (FLV audio, AMF0), Icecast (HTTP PUT), SRT (MPEG-TS);
        // each destination a sink with its own queue, thread and reconnects.
        // Object stores reached over HTTP: S3 and the stores that speak its API.
        .target(name: "ObjectStorage", dependencies: ["MediaCore", "XMLReader", .product(name: "Crypto", package: "swift-crypto"),
                                                     .product(name: "AsyncHTTPClient", package: "async-http-client"),
                                                     .product(name: "NIOCore", package: "swift-nio"),
                                                     .product(name: "NIOPosix", package: "swift-nio"),
                                                     .product(name: "NIOSSL", package: "swift-nio-ssl"),
                                                     .product(name: "NIOHTTP1", package: "swift-nio"),
                                                     .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .target(name: "Publishing", dependencies: ["MediaCore", "AACBitstream", "AudioBitstreams", "MPEGTS", "RTMP", "CSRT", "ObjectStorage",
                                                  .product(name: "SystemPackage", package: "swift-system"),
                                                  .product(name: "NIOCore", package: "swift-nio"),
                                                  .product(name: "NIOPosix", package: "swift-nio"),
                                                  .product(name: "NIOTLS", package: "swift-nio"),
                                                  .product(name: "NIOSSL", package: "swift-nio-ssl")], swiftSettings: strict),

        // ALSA capture and playback (libasound2-dev).
        .target(name: "CALSA", linkerSettings: [.linkedLibrary("asound")]),
        .target(name: "AudioIO", dependencies: ["CALSA", "MediaCore", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),

        .target(name: "KeyFrameKit", dependencies: ["MediaCore", "AACBitstream", "AudioBitstreams", "PCMAudio", "MP4", "MediaFormats", "MediaStreaming", "MediaValidation",
                                                   "AudioCodec", "SpectralBandReplication",
                                                   "VideoBitstream", "AudioIO", "Publishing",
                                                   .product(name: "RealModule", package: "swift-numerics"), .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        // Serving a live recording over HTTP (low-latency HLS): a component an app mounts.
        .target(name: "HLSServer", dependencies: ["MediaStreaming", "MediaCore", .product(name: "Hummingbird", package: "hummingbird"),
                                                 .product(name: "HTTPTypes", package: "swift-http-types"),
                                                 .product(name: "NIOCore", package: "swift-nio"),
                                                 .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                                                 .product(name: "HummingbirdTLS", package: "hummingbird"),
                                                 .product(name: "HummingbirdCore", package: "hummingbird"),
                                                 .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        // The command line: every command, in a library both executables run. `keyframe` links no
        // HTTP server; `keyframe-serve` (HLSServer) runs `serve` and `record --serve`, which
        // `keyframe` hands over to it.
        .target(
            name: "KeyframeCommands",
            dependencies: ["KeyFrameKit", "MediaCore", "XMLReader", "MediaValidation", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        .executableTarget(name: "keyframe", dependencies: ["KeyframeCommands"], swiftSettings: strict),
        .executableTarget(name: "keyframe-serve", dependencies: ["KeyframeCommands", "HLSServer", "KeyFrameKit"], swiftSettings: strict),

        // Fuzzing: the targets are plain Swift (replayed by the tests); the driver links libFuzzer
        // only when built with -sanitize=fuzzer -DFUZZING (see `make fuzz`).
        .target(name: "FuzzTargets", dependencies: ["MediaCore", "AACBitstream", "AudioBitstreams", "PCMAudio", "MP4", "VideoBitstream", "MediaFormats", "MediaStreaming", "MediaValidation",
                                                   "XMLReader", "MPEGTS", "RTMP",
                                                   .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .target(name: "CLibFuzzer"),
        .executableTarget(name: "keyframe-fuzz", dependencies: ["FuzzTargets", "CLibFuzzer"], swiftSettings: strict),

        // Examples/: small programs on the public API only (separate modules), run by `make examples`.
        .executableTarget(name: "record-m4a", dependencies: ["KeyFrameKit"], path: "Examples/record-m4a", swiftSettings: strict),
        .executableTarget(name: "decode-mp4", dependencies: ["KeyFrameKit"], path: "Examples/decode-mp4", swiftSettings: strict),
        .executableTarget(name: "mux-h264", dependencies: ["KeyFrameKit"], path: "Examples/mux-h264", swiftSettings: strict),
        .executableTarget(name: "serve-vapor", dependencies: ["KeyFrameKit", .product(name: "Vapor", package: "vapor")],
                          path: "Examples/serve-vapor", swiftSettings: strict),
        .executableTarget(name: "edit-m4a", dependencies: ["KeyFrameKit"], path: "Examples/edit-m4a", swiftSettings: strict),
        .executableTarget(name: "tee-capture", dependencies: ["KeyFrameKit"], path: "Examples/tee-capture", swiftSettings: strict),
        .executableTarget(name: "package-hls", dependencies: ["MediaStreaming", "MediaValidation"], path: "Examples/package-hls", swiftSettings: strict),

                .testTarget(name: "MediaCoreTests", dependencies: ["MediaCore", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        // Shared by the test targets: running peer tools as subprocesses.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        // Killed by the atomic-commit tests while it commits a file over and over.
        .executableTarget(name: "commit-probe", dependencies: ["MediaCore", .product(name: "SystemPackage", package: "swift-system")],
                          path: "Tests/CommitProbe", swiftSettings: strict),
        .testTarget(name: "AudioBitstreamsTests", dependencies: ["AudioBitstreams", "MediaCore"], swiftSettings: strict),
        .testTarget(name: "AACBitstreamTests", dependencies: ["AACBitstream", "MP4", "MediaCore", "FuzzTargets", "TestSupport"], resources: [.copy("Regressions")], swiftSettings: strict),
        .testTarget(name: "PCMAudioTests", dependencies: ["PCMAudio", "MediaCore", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .testTarget(name: "MP4Tests", dependencies: ["MP4", "AACBitstream", "MediaCore", "VideoBitstream", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .testTarget(name: "VideoBitstreamTests", dependencies: ["VideoBitstream", "MP4", "MediaCore", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .testTarget(name: "SpectralBandReplicationTests", dependencies: ["SpectralBandReplication", "AACBitstream", "MediaCore", "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "AudioCodecTests", dependencies: ["AudioCodec", "AACBitstream", "AudioBitstreams", "MediaCore", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .testTarget(name: "AudioIOTests", dependencies: ["AudioIO", "MediaCore", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "KeyFrameKitTests", dependencies: ["KeyFrameKit", "AudioCodec", "MediaFormats", "MediaStreaming", "MediaValidation", "XMLReader", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .testTarget(name: "MediaFormatsTests", dependencies: ["MediaFormats", "AudioBitstreams", "MediaCore"], swiftSettings: strict),
        .testTarget(name: "MediaStreamingTests", dependencies: ["MediaCore", "MediaStreaming", "MediaFormats", "TestSupport"], swiftSettings: strict),
        // XMLReader's own tests: pure Swift, no C library.
        .testTarget(name: "XMLReaderTests", dependencies: ["XMLReader", "MediaCore", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "MediaValidationTests", dependencies: ["MediaValidation", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .testTarget(name: "HLSServerTests", dependencies: ["HLSServer", "MediaStreaming", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        // A codec, a container and a destination of another package, registered through the public API alone (no @testable).
        .testTarget(name: "ExtensionTests", dependencies: ["KeyFrameKit", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .testTarget(name: "MPEGTSTests", dependencies: ["MPEGTS", "AACBitstream", "AudioBitstreams", "MediaCore", "FuzzTargets", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "RTMPTests", dependencies: ["RTMP", "AACBitstream", "MediaCore", "FuzzTargets", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ObjectStorageTests", dependencies: ["MediaCore", "ObjectStorage"], swiftSettings: strict),
        .testTarget(name: "PublishingTests", dependencies: ["Publishing", "RTMP", "MediaFormats", "MediaCore", "AACBitstream", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "InteropTests", dependencies: ["KeyFrameKit", "AACBitstream", "MediaCore", "TestSupport", .product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
    ]
)
