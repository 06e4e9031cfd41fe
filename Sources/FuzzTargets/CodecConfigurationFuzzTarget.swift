import AudioBitstreams
import MediaCore

// The `codecconfig` fuzz target: an MP4's `dOps`, `dfLa` or `alac` box, an Ogg stream's
// `OpusHead` and a FLAC file's metadata, parsed and written back both ways.

extension FuzzTarget {
    static func codecConfiguration(_ data: [UInt8]) {
        for head in [try? OpusHeader(bytes: data), try? OpusHeader(dOpsPayload: data)].compactMap({ $0 }) {
            precondition((try? OpusHeader(bytes: head.bytes)) == head, "OpusHead does not read back")
            precondition((try? OpusHeader(dOpsPayload: head.dOpsPayload)) == head, "dOps does not read back")
        }
        for info in [try? FLACStreamInfo(bytes: data), try? FLACStreamInfo(dfLaPayload: data)].compactMap({ $0 }) {
            precondition((try? FLACStreamInfo(bytes: info.bytes)) == info, "STREAMINFO does not read back")
            precondition((try? FLACStreamInfo(dfLaPayload: info.dfLaPayload)) == info, "dfLa does not read back")
        }
        for config in [try? ALACSpecificConfig(bytes: data), try? ALACSpecificConfig(cookie: data)].compactMap({ $0 }) {
            precondition((try? ALACSpecificConfig(cookie: config.cookie)) == config, "the ALAC cookie does not read back")
            precondition((try? ALACSpecificConfig(bytes: config.alacBoxPayload.dropFirst(4))) == config, "the alac box does not read back")
        }
        // A chain of metadata blocks, as a FLAC file holds after `fLaC`: each read within the bytes.
        var reader = ByteReader(data)
        var blocks = 0
        while !reader.isAtEnd, blocks < 1000, let (block, isLast) = try? FLACMetadataBlock.read(&reader, structure: "metadata") {
            precondition(block.body.count <= data.count, "a block larger than the input")
            blocks += 1
            if isLast { break }
        }
    }
}
