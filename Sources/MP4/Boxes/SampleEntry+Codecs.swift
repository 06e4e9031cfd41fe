internal import AACBitstream

extension SampleEntry {
    /// The entry's codec as RFC 6381 (3.3, the ISO BMFF name space) names it in an HLS `CODECS`
    /// or a DASH `@codecs`: `mp4a.40.2` for AAC-LC (the `esds` objectTypeIndication in hex, then
    /// the AudioSpecificConfig's audioObjectType in decimal, as ISO/IEC 14496-3 1.5.1.1 numbers
    /// it: `mp4a.40.5` for HE-AAC, `mp4a.40.29` for HE-AAC v2), `mp4a.6b` for MP3, the
    /// four-character code for `Opus`, `fLaC`, `ac-3`, `ec-3`, `alac`; `avc1.PPCCLL` from an
    /// `avcC`. `nil` when the entry lacks what the name needs.
    public var codecsParameter: String? {
        switch type {
        case "mp4a":
            guard let config = esDescriptor?.decoderConfig else { return nil }
            let indication = config.objectTypeIndication
            let hex = String(indication, radix: 16)
            let oti = hex.count == 1 ? "0" + hex : hex
            guard indication == 0x40 else { return "mp4a.\(oti)" }
            guard let asc = try? audioSpecificConfig() else { return nil }
            // SBR or PS signalled names the stream HE-AAC (5) or HE-AAC v2 (29), not its AAC-LC core.
            return "mp4a.40.\(asc.profile.rawValue)"
        case "avc1", "avc3":
            guard let avcC = configurationBoxes["avcC"], avcC.count >= 4 else { return nil }
            let digits = avcC[1...3].map { byte -> String in
                let hex = String(byte, radix: 16, uppercase: true)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
            return "\(type).\(digits)"
        // The sample entry's own four characters (RFC 6381 3.3; the MP4 registration authority's
        // codecs list): `Opus` and `fLaC` as written, which browsers' `isTypeSupported` takes
        // lower-cased.
        case "Opus", "fLaC", "ac-3", "ec-3", "alac": return type.description
        default: return nil
        }
    }
}
