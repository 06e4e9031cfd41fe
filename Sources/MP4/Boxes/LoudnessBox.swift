public import MediaCore

/// `ludt` (ISO/IEC 14496-12 12.2.7, LoudnessBox) with one `tlou` (TrackLoudnessInfo, version
/// 0): the track's loudness as ISO/IEC 23003-4 codes it, which Apple's HLS authoring rule 2.19
/// asks an fMP4 init segment to carry (in `trak/udta`, where MPEG's reference software writes it).
///
/// The `tlou` says: no downmix and no DRC set (IDs 0); the sample peak and true peak
/// (`bs_sample_peak_level`, `bs_true_peak_level` = 32 × (20 − dB), 0 when not measured), the
/// true peak by ITU-R BS.1770-4 (`measurement_system` 2, `reliability` 3, accurate); one
/// measurement, the programme
/// loudness (`method_definition` 1, `method_value` = 4 × (LUFS + 57.75)), as Apple's rule 2.21
/// asks of in-stream loudness (method 1 or 2, system 2).
public enum LoudnessBox {
    /// The whole `ludt` box for `loudness`.
    public static func bytes(_ loudness: StreamLoudness) -> [UInt8] {
        var box = BoxWriter()
        box.box("ludt") { ludt in
            ludt.fullBox("tlou") { b in
                // reserved(3) downmix_ID(7) DRC_set_ID(6)
                b.u16(0)
                let truePeak = loudness.truePeak.map { peakCode($0) } ?? 0
                let samplePeak = loudness.samplePeak.map { peakCode($0) } ?? 0
                // bs_sample_peak_level(12), bs_true_peak_level(12)
                b.u8(UInt8(samplePeak >> 4 & 0xFF))
                b.u8(UInt8(samplePeak & 0x0F) << 4 | UInt8(truePeak >> 8 & 0x0F))
                b.u8(UInt8(truePeak & 0xFF))
                // measurement_system_for_TP(4) reliability_for_TP(4)
                b.u8(loudness.truePeak == nil ? 0 : 0x23)
                b.u8(1)  // measurement_count
                b.u8(1)  // method_definition: program loudness
                b.u8(loudnessCode(loudness.integrated))
                b.u8(0x23)  // measurement_system 2 (ITU-R BS.1770-4), reliability 3 (accurate)
            }
        }
        return box.bytes
    }

    /// `method_value` of a loudness in LUFS (ISO/IEC 23003-4): 4 × (LUFS + 57.75), clamped to a byte.
    static func loudnessCode(_ lufs: Double) -> UInt8 {
        UInt8(clamping: Int((4 * (lufs + 57.75)).rounded()))
    }

    /// A 12-bit peak code of a level in dB (ISO/IEC 23003-4): 32 × (20 − dB), 1 to 2047 (0 says
    /// "not present"; the field is read signed, so at most 2047, about −44 dB).
    static func peakCode(_ decibels: Double) -> UInt16 {
        UInt16(min(2047, max(1, Int((32 * (20 - decibels)).rounded()))))
    }

    /// The programme loudness and true peak of a `ludt` box's payload (after its header): its
    /// first `tlou`'s; `nil` when it has none that reads.
    public static func read(_ payload: [UInt8]) -> StreamLoudness? {
        guard var boxes = try? BoxIterator(ByteReader(payload), path: BoxPath(components: ["ludt"])) else { return nil }
        while let box = try? boxes.next() {
            guard box.header.type == "tlou" else { continue }
            var reader = box.payload
            guard let bytes = try? reader.readBytes(reader.remaining), bytes.count >= 12, bytes[0] == 0 else { return nil }
            let samplePeakCode = Int(bytes[6]) << 4 | Int(bytes[7] >> 4)
            let truePeakCode = Int(bytes[7] & 0x0F) << 8 | Int(bytes[8])
            let count = Int(bytes[10])
            var integrated: Double?
            for index in 0..<count where 11 + index * 3 + 2 < bytes.count {
                let entry = 11 + index * 3
                if bytes[entry] == 1 || bytes[entry] == 2 { integrated = Double(bytes[entry + 1]) / 4 - 57.75 }
            }
            guard let integrated else { return nil }
            return StreamLoudness(integrated: integrated, truePeak: truePeakCode == 0 ? nil : 20 - Double(truePeakCode) / 32,
                                  samplePeak: samplePeakCode == 0 ? nil : 20 - Double(samplePeakCode) / 32)
        }
        return nil
    }
}
