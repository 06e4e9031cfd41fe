import AACBitstream
import MediaCore

extension FuzzTarget {
    /// The `rdb` target's input: the first byte's low four bits choose the sampling frequency index
    /// (modulo 13), its bits 4–6 the channel configuration, the rest is one raw data block (ISO/IEC 14496-3, 4.4.2.1 Table 4.3).
    static func rawDataBlock(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let configuration = RawDataBlock.Configuration(
            samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: (first & 0xF) % 13), channelConfiguration: (first >> 4) & 7)
        let bytes = Array(data.dropFirst())
        let block: RawDataBlock
        do {
            block = try RawDataBlock(parsing: bytes, configuration: configuration)
        } catch {
            return   // a typed error (AACBitstreamError) is the other allowed answer
        }
        precondition((try? block.serialized()) == bytes, "a raw data block does not write back to its bytes")
        precondition((try? block.elementBitRanges()) == block.parsedBitRanges, "element bit lengths differ from what was read")
        // An SBR fill element after each channel element writes and reads back.
        var extended = block
        for index in block.elements.indices.reversed() where block.elements[index].isAudioChannelElement {
            guard let fill = try? FillElement(extensionType: FillElement.ExtensionType.sbrData) else { preconditionFailure("an empty SBR fill element") }
            try? extended.insert(.fill(fill), after: index)
        }
        guard let written = try? extended.serialized() else { preconditionFailure("an extended block does not write") }
        guard let reread = try? RawDataBlock(parsing: written, configuration: configuration) else {
            preconditionFailure("an extended block does not parse")
        }
        precondition((try? reread.serialized()) == written, "an extended block does not write back")
        precondition(reread.elements.map(\.identifier) == extended.elements.map(\.identifier), "an extended block reads other elements")
        // Byte-aligned elements (PCE, DSE) moved by the insertion keep zeros for alignment, not
        // the bits they read; every other element reads back the same.
        for (read, inserted) in zip(reread.elements, extended.elements) {
            switch read {
            case .programConfig, .dataStream: continue
            default: precondition(read == inserted, "an element of an extended block does not read back")
            }
        }
    }
}
