import AudioBitstreams
import MediaCore

// The `flac` fuzz target: a native FLAC file's metadata blocks and frames, as the frame reader
// and an edit read and rewrite them.

extension FuzzTarget {
    static func flac(_ data: [UInt8]) {
        // The file reader over the same bytes, as a file.
        NativeFileFuzzTarget.read(data, as: .flac)
        // Metadata blocks after `fLaC`: each reads within its bytes and writes back to them.
        var reader = ByteReader(data)
        if data.starts(with: Array("fLaC".utf8)) {
            try? reader.skip(4)
            var blocks = 0
            while blocks < 64, !reader.isAtEnd {
                let start = Int(reader.offset)
                guard let (block, isLast) = try? FLACMetadataBlock.read(&reader, structure: "block") else { break }
                precondition(sameBytes(block.bytes(isLast: isLast), Array(data[start..<Int(reader.offset)])), "a FLAC metadata block does not write back")
                if block.type == .streamInfo, let info = try? FLACStreamInfo(bytes: block.body) {
                    precondition((try? FLACStreamInfo(bytes: info.bytes)) == info, "STREAMINFO does not read back")
                }
                if block.type == .vorbisComment, let comment = try? VorbisComment(bytes: block.body) {
                    precondition((try? VorbisComment(bytes: comment.bytes)) == comment, "a Vorbis comment does not read back")
                }
                blocks += 1
                if isLast { break }
            }
        }
        // Frame headers wherever a sync code is: each writes back to a header of the same fields
        // (its number in the fewest bytes), and a frame renumbered keeps its body and gets a
        // footer that matches.
        var index = Int(reader.offset)
        var found = 0
        while index + 6 <= data.count, found < 256 {
            defer { index += 1 }
            guard data[index] == 0xFF, let header = FLACFrameHeader(data, at: index) else { continue }
            found += 1
            precondition(header.byteCount >= 6 && index + header.byteCount <= data.count, "a FLAC frame header read outside its bytes")
            guard let again = FLACFrameHeader(header.bytes, at: 0) else { preconditionFailure("a written FLAC frame header does not read") }
            precondition(again.blockSize == header.blockSize && again.codedNumber == header.codedNumber
                             && again.isVariableBlockSize == header.isVariableBlockSize && again.channelAssignment == header.channelAssignment
                             && again.bitDepthCode == header.bitDepthCode && again.sampleRateCode == header.sampleRateCode
                             && again.sampleRateBytes == header.sampleRateBytes, "a FLAC frame header does not read back")
            let end = min(data.count, index + header.byteCount + 64)
            let frame = Array(data[index..<end])
            _ = FLACFrame.footerMatches(frame)
            var renumbered = header
            renumbered.isVariableBlockSize = true
            renumbered.codedNumber = UInt64(index) << 20
            if let written = FLACFrame.renumbered(frame, as: renumbered) {
                precondition(FLACFrame.footerMatches(written), "a renumbered FLAC frame's footer does not match")
                precondition(FLACFrameHeader(written, at: 0)?.codedNumber == renumbered.codedNumber, "a renumbered FLAC frame reads another number")
                precondition(sameBytes(Array(written.dropLast(2).suffix(frame.count - 2 - header.byteCount)), Array(frame[header.byteCount..<(frame.count - 2)])),
                             "a renumbered FLAC frame's body changed")
            }
        }
    }
}
