// Lists the tracks of an MP4 (or M4A, MOV), then decodes its first AAC track to a WAV, the
// edit list applied: the encoder's priming is dropped and decoding stops where the edit ends.
//
//   decode-mp4 INPUT.mp4 OUTPUT.wav
import KeyFrameKit
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: decode-mp4 INPUT.mp4 OUTPUT.wav")
    exit(2)
}
let input = FilePath(arguments[1])
let output = FilePath(arguments[2])

do {
    // 1. The file's structure: MP4File reads the boxes (never the media data) through a
    //    bounds-checked reader. Damage a player would step over is listed, not thrown.
    let file = try MP4File(source: FileByteSource(path: input))
    for track in file.tracks {
        let seconds = Double(track.mediaDuration) / Double(max(track.timescale, 1))
        print("track \(track.id): \(track.typeName) \(track.codecName), \(track.sampleCount) samples, \(seconds) s")
    }
    for damage in file.damage { print("damage: \(damage)") }

    // 2. The pipeline: a packet source (the AAC track, with its AudioSpecificConfig and the
    //    edit list's trim) → a decoder (a transform: packets in, PCM out) → a WAV file (a PCM
    //    sink, written under a temporary name and renamed when complete).
    let packets = try AudioPacketInput(path: input)
    let decoder = try packets.makeDecoder()
    var pcm = packets.transformed(by: decoder)
    var wav = try PCMFileOutput(path: output)

    // 3. One pump moves everything from the source to the sink, then finishes the sink.
    let report = try Pump.run(from: &pcm, into: &wav)
    print("\(output): \(wav.frames) frames from \(report.elements) buffers")
    for damage in report.damage { print("damage: \(damage)") }
} catch {
    print("decode-mp4: \(error)")
    exit(1)
}
