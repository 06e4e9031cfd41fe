public import SystemPackage

extension FLACFileDecoder {
    /// What `keyframe validate` says of a native FLAC file: libFLAC decodes every frame (their
    /// CRCs checked) and the MD5 of the decoded samples against STREAMINFO's, and the length
    /// against STREAMINFO's total, and that no block but the last is shorter than STREAMINFO's
    /// least; a STREAMINFO without a length or an MD5 is a warning, since
    /// neither can be checked.
    public static func findings(for path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let file = path.string
        let decoder: FLACFileDecoder
        do { decoder = try FLACFileDecoder(path: path) } catch { throw .codec(error) }
        var findings: [ValidationFinding] = []
        let info = decoder.streamInfo
        if info.totalSamples == 0 {
            findings.append(ValidationFinding(.warning, file: file, location: "STREAMINFO", rule: "total samples",
                                              expected: "the stream's length", found: "0 (unknown)"))
        }
        if info.md5.allSatisfy({ $0 == 0 }) {
            findings.append(ValidationFinding(.warning, file: file, location: "STREAMINFO", rule: "MD5 of the samples",
                                              expected: "the decoded samples' MD5", found: "none (all zero)"))
        }
        // RFC 9639 9.1.6: only the last block may be shorter than STREAMINFO's least block
        // size (and 16); one in the middle is allowed by most decoders and refused by some.
        var previousBlock: (start: Int64, size: Int)?
        var shortBlock: (start: Int64, size: Int)?
        var decoded: Int64 = 0
        do {
            while let buffer = try decoder.nextBuffer() {
                if shortBlock == nil, let previousBlock, previousBlock.size < max(16, info.minimumBlockSize) {
                    shortBlock = previousBlock
                }
                previousBlock = (decoded, buffer.frameCount)
                decoded += Int64(buffer.frameCount)
            }
        } catch {
            findings.append(ValidationFinding(.error, file: file, location: "frame at sample \(decoder.decodedFrameCount)", rule: "FLAC decode",
                                              expected: "every frame of the \(info.totalSamples) samples", found: "\(error)"))
        }
        if let shortBlock {
            findings.append(ValidationFinding(.error, file: file, location: "frame at sample \(shortBlock.start)", rule: "block size",
                                              expected: "at least \(max(16, info.minimumBlockSize)) samples (STREAMINFO's least; only the last block may be shorter)",
                                              found: "\(shortBlock.size)"))
        }
        for damage in decoder.takeDamage() {
            let isChecksum = damage.kind == .checksumMismatch
            findings.append(ValidationFinding(.error, file: file, location: isChecksum ? "STREAMINFO" : "frames",
                                              rule: isChecksum ? "MD5 of the samples against the decode" : "FLAC decode",
                                              expected: isChecksum ? "STREAMINFO's MD5" : "no damage", found: damage.message))
        }
        if info.totalSamples > 0, decoder.decodedFrameCount != info.totalSamples, findings.allSatisfy({ $0.rule != "FLAC decode" }) {
            findings.append(ValidationFinding(.error, file: file, location: "STREAMINFO", rule: "total samples against the decode",
                                              expected: "\(decoder.decodedFrameCount)", found: "\(info.totalSamples)"))
        }
        return findings
    }
}
