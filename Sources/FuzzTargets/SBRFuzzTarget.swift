import AACBitstream
import MediaCore

extension FuzzTarget {
    /// The `sbr` target's input: the first byte chooses the output rate (modulo 6: 16, 22.05,
    /// 24, 32, 44.1, 48 kHz; bit 3 a CPE instead of an SCE, bit 4 independent delta coding);
    /// then frames, each a length byte `n` and `n` bytes of `sbr_extension_data()` and fill
    /// (ISO/IEC 14496-3, 4.4.2.8), read by one ``SBRStreamParser``.
    static func sbr(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let rates = [16000, 22050, 24000, 32000, 44100, 48000]
        let rate = rates[Int(first % 6)]
        let channelCount = first & 8 == 0 ? 1 : 2
        let independent = first & 16 != 0
        var parser = SBRStreamParser(outputSampleRate: rate)
        var position = 1
        var frames = 0
        while position < data.count, frames < 64 {
            let length = Int(data[position])
            let bytes = Array(data[(position + 1)..<min(position + 1 + length, data.count)])
            position += 1 + length
            frames += 1
            let before = parser
            var reader = BitReader(bytes)
            let parsed: SBRExtensionData?
            do {
                parsed = try parser.parse(&reader, channelCount: channelCount, bitLimit: bytes.count * 8)
            } catch {
                precondition(parser.header == nil, "an SBR parse error leaves the parser on")
                continue   // a typed error (AACBitstreamError) is the other allowed answer
            }
            precondition(reader.bitsRemaining == 0, "the SBR parser does not consume its bit limit")
            guard let parsed else {
                precondition(parser.header == nil, "SBR data skipped after a header")
                continue
            }
            guard let tables = parser.tables else { preconditionFailure("SBR data without tables") }
            // The history the frame was read against: cleared when its header changed the tables.
            let sameTables = before.tables.map { tables.header.hasSameSpectrum(as: $0.header) } ?? false
            var history = sameTables && before.histories.count == channelCount
                ? before.histories : Array(repeating: SBRChannelHistory(), count: channelCount)
            let startHistory = history
            var writer = BitWriter()
            do {
                try parsed.write(to: &writer, tables: tables, history: &history)
            } catch {
                preconditionFailure("parsed SBR data does not write: \(error)")
            }
            precondition(history == parser.histories, "the SBR writer and parser keep other histories")
            var shadow = before
            var again = BitReader(writer.bytes)
            let reparsed = try? shadow.parse(&again, channelCount: channelCount, bitLimit: writer.bytes.count * 8)
            precondition(reparsed == parsed, "SBR data does not read back to itself")
            precondition(shadow.histories == parser.histories, "SBR histories differ after a re-read")

            // Delta coding chosen anew always writes, and reads back to what was chosen.
            var chosen = parsed
            chosen.chooseDeltaCoding(tables: tables, history: startHistory, independent: independent)
            var chosenHistory = startHistory
            var chosenWriter = BitWriter()
            do {
                try chosen.write(to: &chosenWriter, tables: tables, history: &chosenHistory)
            } catch {
                preconditionFailure("SBR data after chooseDeltaCoding does not write: \(error)")
            }
            var chosenShadow = before
            var chosenReader = BitReader(chosenWriter.bytes)
            let chosenRead = try? chosenShadow.parse(&chosenReader, channelCount: channelCount, bitLimit: chosenWriter.bytes.count * 8)
            precondition(chosenRead == chosen, "chosen SBR delta coding does not read back")
            if independent {
                for channel in chosen.channels {
                    precondition(channel.envelopeTimeDelta.first == false && channel.noiseTimeDelta.first == false,
                                 "an independent SBR frame time-codes its first envelope or noise floor")
                }
            }
        }
    }
}
