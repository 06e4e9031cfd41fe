// One capture, one encoder, three sinks: 3 seconds from an ALSA capture device to a gapless
// M4A, a live HLS rendition from the same AAC packets, and a callback that counts them (a
// ``LiveEncoding``: capture → encoder → tee). The file and the rendition decode to exactly the
// frames captured.
//
//   tee-capture DEVICE OUTPUT.m4a HLS_DIR [ALSA_CONFIG_FILE]
//
// `make examples` records from ALSA's `file` plugin, defined in ALSA_CONFIG_FILE.
import KeyFrameKit
import Glibc
import Synchronization

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5 else {
    print("usage: tee-capture DEVICE OUTPUT.m4a HLS_DIR [ALSA_CONFIG_FILE]")
    exit(2)
}

do {
    let alsa = try arguments.count == 5 ? ALSAConfiguration(systemConfigurationAnd: [FilePath(arguments[4])]) : nil
    // A queue of 5 s of periods: encoding never drops what capture delivers.
    let capture = LiveEncoding.Capture(audio: .default, device: arguments[1], alsaConfiguration: alsa, queueCapacity: 250,
                                       frameLimit: 3 * AudioConfiguration.default.sampleRate)
    // The encoder comes from the codec registry; any codec a registry holds goes in the same way.
    let encoder = try AudioCodecRegistry.standard.encoder(for: .aac, settings: .init(bitrate: 128_000, format: capture.audio.pcmFormat))
    // The file comes from the format registry, by its name. The encoder tells its priming and,
    // at the end, the exact length down the stream; every sink learns them there.
    let file = try MediaFormatRegistry.standard.packetOutput(FilePath(arguments[2]))
    let hls = try HLSSegmentOutput(directory: FilePath(arguments[3]), segmentDuration: 1, live: .init())
    let counted = Mutex(0)
    let live = try LiveEncoding(capture: capture, encoder: encoder, sinks: [
        Tee.Branch(file, name: "file"),
        Tee.Branch(hls, name: "hls"),
        Tee.Branch(CallbackSink<MediaSample> { _ in counted.withLock { $0 += 1 } }, name: "callback"),
    ])
    // Starts the device, then the pump on a thread of its own; ends at the frame limit.
    try live.start()
    while !live.job.wait(timeout: .milliseconds(500)) {}
    let summary = try live.finish()
    print("\(arguments[2]) and \(arguments[3])/index.m3u8: \(summary.packets) AAC packets each, "
          + "\(counted.withLock { $0 }) seen by the callback; \(summary.frames) frames")
} catch {
    print("tee-capture: \(error)")
    exit(1)
}
