import AACBitstream
import MediaCore

extension FuzzTarget {
    /// The `ps` target's input: the first byte's bit 0 asks for independent delta coding; then
    /// frames, each a length byte `n` and `n` bytes of SBR `bs_extended_data` (ISO/IEC 14496-3,
    /// 4.4.2.8: `bs_extension_id`, `ps_data()` of 8.3, fill), read by one
    /// ``ParametricStereoParser``.
    static func parametricStereo(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let independent = first & 1 != 0
        var parser = ParametricStereoParser()
        var position = 1
        var frames = 0
        while position < data.count, frames < 64 {
            let length = Int(data[position])
            let bytes = Array(data[(position + 1)..<min(position + 1 + length, data.count)])
            position += 1 + length
            frames += 1
            let before = parser
            let input = BitString(bytes: bytes)
            let parsed: ParametricStereoFrame?
            do {
                parsed = try parser.parse(extendedData: input)
            } catch {
                precondition(parser.header == nil && parser.history == ParametricStereoHistory(), "a PS parse error leaves the parser on")
                continue   // a typed error (AACBitstreamError) is the other allowed answer
            }
            guard let parsed else {
                precondition(parser.history == before.history, "PS data skipped, but the parser's state changed")
                precondition(bytes.count == 0 || bytes[0] >> 6 != 2 || (before.header == nil && bytes[0] & 0x20 == 0),
                             "PS data with a header in force, or with its own header, skipped")
                continue
            }
            precondition(parser.header != nil, "PS data read without a header in force")

            // What parses writes back to exactly the bits it was read from, with the same history.
            var history = before.history
            var writer = BitWriter()
            do {
                try parsed.write(to: &writer, history: &history)
            } catch {
                preconditionFailure("parsed PS data does not write: \(error)")
            }
            precondition(history == parser.history, "the PS writer and parser keep other histories")
            var original = BitReader(bytes)
            _ = try? original.readBits(2)
            precondition((try? original.readBitString(writer.bitCount)) == writer.bits, "PS data does not write back to its bits")
            var payloadHistory = before.history
            guard let payload = try? parsed.extendedData(history: &payloadHistory) else {
                preconditionFailure("parsed PS data does not fit bs_extended_data")
            }
            precondition(payload.count <= bytes.count * 8 && payload.count % 8 == 0, "PS extended data grew or is not whole bytes")
            var shadow = before
            let reparsed = try? shadow.parse(extendedData: payload)
            precondition(reparsed == parsed, "PS data does not read back to itself")
            precondition(shadow.history == parser.history, "PS histories differ after a re-read")

            // Delta coding chosen anew always writes, reads back to what was chosen, and is no longer.
            var chosen = parsed
            chosen.chooseDeltaCoding(history: before.history, independent: independent)
            precondition(chosen.iid == parsed.iid && chosen.icc == parsed.icc, "chooseDeltaCoding changed PS values")
            var chosenHistory = before.history
            var chosenWriter = BitWriter()
            do {
                try chosen.write(to: &chosenWriter, history: &chosenHistory)
            } catch {
                preconditionFailure("PS data after chooseDeltaCoding does not write: \(error)")
            }
            precondition(chosenHistory == parser.history, "chosen PS delta coding leaves another history")
            if !independent { precondition(chosenWriter.bitCount <= writer.bitCount, "chosen PS delta coding is longer") }
            var chosenPayloadHistory = before.history
            let chosenPayload = try? chosen.extendedData(history: &chosenPayloadHistory)
            var chosenShadow = before
            let chosenRead = chosenPayload.flatMap { try? chosenShadow.parse(extendedData: $0) }
            precondition(chosenRead == chosen, "chosen PS delta coding does not read back")
            if independent {
                precondition(chosen.iidTimeDelta.first != true && chosen.iccTimeDelta.first != true,
                             "an independent PS frame time-codes its first envelope")
            }
        }
    }
}
