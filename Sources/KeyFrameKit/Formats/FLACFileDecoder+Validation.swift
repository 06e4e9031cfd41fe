public import SystemPackage

extension FLACFileDecoder {
    /// What `keyframe validate` says of a native FLAC file: libFLAC decodes every frame (their
    /// CRCs checked) and the MD5 of the decoded samples against STREAMINFO's, and the length
    /// against STREAMINFO's total; a STREAMINFO without a length or an MD5 is a warning, since
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
        do {
            while try decoder.nextBuffer() != nil {}
        } catch {
            findings.append(ValidationFinding(.error, file: file, location: "frame at sample \(decoder.decodedFrameCount)", rule: "FLAC decode",
                                              expected: "every frame of the \(info.totalSamples) samples", found: "\(error)"))
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
