import AudioBitstreams
import MediaCore

// The `mp3` fuzz target: an MP3 file's head, as the MP3 writer and a tag edit read it: an ID3v2
// tag, then MPEG audio frame headers, the first frame's Info/LAME tag.

extension FuzzTarget {
    static func mp3(_ data: [UInt8]) {
        // The file reader over the same bytes, as a file.
        NativeFileFuzzTarget.read(data, as: .mp3)
        var start = 0
        if let tag = try? ID3v2Tag(bytes: data) {
            // Written as 2.4 (frames re-encoded as UTF-8), it reads back to the same frames, and
            // writes the same bytes again.
            let written = tag.bytes(padding: Int(data.last ?? 0))
            guard let again = try? ID3v2Tag(bytes: written) else { preconditionFailure("a written ID3v2 tag does not read") }
            precondition(again.frames == tag.frames, "ID3v2 frames do not read back")
            precondition(sameBytes(again.bytes(padding: Int(data.last ?? 0)), written), "ID3v2 does not write back to itself")
            start = min(data.count, ID3v2Tag.length(ofTagStarting: data) ?? 0)
        }
        // Frame headers from the tag's end: each reads back to its bytes, its length within bounds.
        var index = start
        var frames = 0
        while frames < 64, let header = MPEGAudioFrameHeader(data, at: index) {
            precondition(header.bytes == Array(data[index..<index + 4]), "an MPEG audio frame header does not write back")
            precondition((24...2881).contains(header.frameLength), "a frame length outside what any header gives")
            _ = header.mainDataBegin(data, frameAt: index)
            if frames == 0, let info = MP3InfoTag(frame: Array(data[index...])) {
                // The Info frame written for the same stream reads back to the same numbers.
                let rewritten = info.frame(header: MP3InfoTag.infoFrameHeader(like: header))
                guard let again = MP3InfoTag(frame: rewritten) else { preconditionFailure("a written Info frame does not read") }
                precondition(again.frameCount == info.frameCount && again.encoderDelay == info.encoderDelay
                                 && again.padding == info.padding && again.samplesPerFrame == info.samplesPerFrame
                                 && again.musicCRC == info.musicCRC && again.tagCRCMatches, "the Info frame does not read back")
            }
            index += header.frameLength
            frames += 1
        }
    }
}
