// Records 3 seconds from an ALSA capture device to an M4A: AAC-LC in an MP4 whose edit list
// makes decoders give back exactly the frames recorded (3 × 44 100, no priming, no padding).
//
//   record-m4a DEVICE OUTPUT.m4a [ALSA_CONFIG_FILE]
//
// DEVICE is an ALSA PCM name: `default`, `pulse`, `hw:1,0`, or a PCM that ALSA_CONFIG_FILE
// (asound.conf syntax) defines; the file is read in-process after the system's configuration,
// as `keyframe record --alsa-config` does. `make examples` records from ALSA's `file` plugin.
import KeyFrameKit
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4 else {
    print("usage: record-m4a DEVICE OUTPUT.m4a [ALSA_CONFIG_FILE]")
    exit(2)
}
let device = arguments[1]
let output = FilePath(arguments[2])

do {
    // Where the device is looked up: the system's ALSA configuration, plus the file if given.
    let alsaConfiguration = try arguments.count == 4
        ? ALSAConfiguration(systemConfigurationAnd: [FilePath(arguments[3])]) : nil

    // Stereo, 44.1 kHz, 16-bit. The container comes from the name (.m4a: AAC in MP4), and the
    // frame limit ends the recording after exactly 3 s of audio.
    let audio = AudioConfiguration.default
    let options = try RecordingOptions(
        outputPath: output, configuration: audio, bitrate: 128_000,
        device: device, alsaConfiguration: alsaConfiguration,
        frameLimit: 3 * audio.sampleRate)

    // Capture → AAC encoder → MP4 muxer, pumped on a thread of its own. `init` opens the
    // encoder; `start()` opens the device, then the file.
    let recording = try LiveEncoding(recording: options)
    try recording.start()
    while !recording.job.wait(timeout: .milliseconds(500)) {
        print("recorded \(recording.progress.frames) frames")
    }

    // Flushes the encoder, writes the movie box and gives the file its name.
    let summary = RecordingSummary(options, of: recording, summary: try recording.finish())
    print("\(output): \(summary.frames) frames, \(summary.seconds) s, encoder priming \(summary.priming)")
} catch {
    print("record-m4a: \(error)")
    exit(1)
}
