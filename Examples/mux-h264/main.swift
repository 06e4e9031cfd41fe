// Muxes an ADTS stream (AAC) and an Annex-B H.264 stream into one MP4, without re-encoding:
// `ffmpeg -i AUDIO.aac -i VIDEO.h264 -c copy OUTPUT.mp4`, with the movie box in front.
//
//   mux-h264 AUDIO.aac VIDEO.h264 FRAMES_PER_SECOND OUTPUT.mp4
//
// An Annex-B stream has no container timing; the frame rate is given (or, with `nil`, taken
// from the SPS's VUI timing when the stream carries it).
import KeyFrameKit
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 5, let framesPerSecond = Int32(arguments[3]), framesPerSecond > 0 else {
    print("usage: mux-h264 AUDIO.aac VIDEO.h264 FRAMES_PER_SECOND OUTPUT.mp4")
    exit(2)
}
let audioPath = FilePath(arguments[1]), videoPath = FilePath(arguments[2])
let output = FilePath(arguments[4])

/// The muxer as a packet sink: one track per media type, created from its first sample.
func makeMuxerSink(writing output: FilePath) throws(PipelineError) -> MuxerOutput {
    let configuration = MuxerConfiguration(layout: .fastStart, mediaTypes: .audioVideo)
    return try MuxerOutput(path: output, configuration: configuration)
}

do {
    // Two packet sources: AAC raw data blocks from the ADTS frames, and H.264 access units
    // (one frame each, parameter sets taken out for the track's avcC) from the Annex-B stream.
    let audio = ADTSPacketReader(source: try FileByteSource(path: audioPath))
    let video = try AnnexBReader(source: try FileByteSource(path: videoPath), codec: .h264,
                                 frameDuration: MediaTime(value: 1, timescale: framesPerSecond))

    // Read as one stream in decode-time order, so the muxer's interleaving queues stay short,
    // and pumped into the muxer, which writes the movie box and renames the file at the end.
    var packets = InterleavedSource(first: audio, second: video)
    var muxer = try makeMuxerSink(writing: output)
    let report = try Pump.run(from: &packets, into: &muxer)
    print("\(output): \(packets.firstCount) audio packets, \(packets.secondCount) video frames")
    for damage in report.damage { print("damage: \(damage)") }
} catch {
    print("mux-h264: \(error)")
    exit(1)
}
