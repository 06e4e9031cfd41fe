// One capture, one encoder, two outputs: 3 seconds from an ALSA capture device to a gapless M4A
// and, from the same AAC packets, a live HLS rendition (a tee). Both decode to exactly the frames
// captured.
//
//   tee-capture DEVICE OUTPUT.m4a HLS_DIR [ALSA_CONFIG_FILE]
//
// `make examples` records from ALSA's `file` plugin, defined in ALSA_CONFIG_FILE.
import KeyFrameKit
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5 else {
    print("usage: tee-capture DEVICE OUTPUT.m4a HLS_DIR [ALSA_CONFIG_FILE]")
    exit(2)
}

do {
    let alsa = try arguments.count == 5 ? ALSAConfiguration(systemConfigurationAnd: [FilePath(arguments[4])]) : nil
    let audio = AudioConfiguration.default
    // The graph: capture → AAC encoder → tee → (M4A file, HLS rendition). The encoder tells its
    // priming and, at the end, the exact length down the stream; both outputs learn them there.
    // A queue of 5 s of periods: encoding never drops what capture delivers.
    let capture = AudioCaptureSource(configuration: audio, device: arguments[1], queueCapacity: 250, frameLimit: 3 * audio.sampleRate,
                                     alsaConfiguration: alsa)
    var source = capture.transformed(by: try AACEncoder(format: audio.pcmFormat, bitrate: 128_000))
    var tee = Tee<MediaSample>([
        .init(try AudioPacketOutput(path: FilePath(arguments[2])), name: "file"),
        .init(try HLSSegmentOutput(directory: FilePath(arguments[3]), segmentDuration: 1, live: .init()), name: "hls"),
    ])
    try capture.capture.start()
    let report = try Pump.run(from: &source, into: &tee)
    print("\(arguments[2]) and \(arguments[3])/index.m3u8: \(report.elements) AAC packets each")
} catch {
    print("tee-capture: \(error)")
    exit(1)
}
