internal import MediaCore

extension RawDataBlock {
    /// Whether the block's SBR data carries parametric stereo (HE-AAC v2 signalled implicitly,
    /// ISO/IEC 14496-3 1.6.6.2 and 8.A): an SBR fill element after a single channel element
    /// whose `sbr_extension_data()` (4.4.2.8), read by `parser`, has `bs_extended_data` that
    /// starts with `bs_extension_id` 2 (EXTENSION_ID_PS).
    ///
    /// The parser keeps the last SBR header and the time-delta histories, so give it every
    /// block from the stream's start; until it has seen a header it reads nothing (`false`).
    /// Data that does not parse says nothing either: this is a question, not a validation.
    public func carriesParametricStereo(parser: inout SBRStreamParser) -> Bool {
        var found = false
        forEachSBRElement { fill, channels in
            guard let data = Self.sbrData(of: fill, channels: channels, parser: &parser), channels == 1,
                  let extended = data.extendedData, extended.count >= 2 else { return true }
            var bits = BitReader(extended.bytes)
            if let id = try? bits.readBits(2), Int(id) == ParametricStereoFrame.extensionID { found = true }
            return !found
        }
        return found
    }

    /// Calls `body` with each SBR fill element and the channels of the element before it, while
    /// `body` returns `true`.
    private func forEachSBRElement(_ body: (FillElement, Int) -> Bool) {
        var channels = 0
        for element in elements {
            switch element {
            case .singleChannel: channels = 1
            case .channelPair: channels = 2
            case .fill(let fill):
                guard fill.extensionType == FillElement.ExtensionType.sbrData || fill.extensionType == FillElement.ExtensionType.sbrDataCRC,
                      channels > 0 else { continue }
                if !body(fill, channels) { return }
            default:
                continue
            }
        }
    }

    /// The `sbr_extension_data()` of an SBR fill element (past its CRC, when it has one), read by
    /// `parser`; `nil` when it does not parse or no header has been seen.
    private static func sbrData(of fill: FillElement, channels: Int, parser: inout SBRStreamParser) -> SBRExtensionData? {
        let skipped = fill.extensionType == FillElement.ExtensionType.sbrDataCRC ? 14 : 4
        var reader = BitReader(fill.payload)
        guard fill.payload.count * 8 > skipped, (try? reader.skipBits(skipped)) != nil else { return nil }
        return try? parser.parse(&reader, channelCount: channels, bitLimit: fill.payload.count * 8 - skipped)
    }
}

extension RawDataBlock {
    /// Whether a decoder may start at this block and decode its SBR (and PS) exactly: every
    /// SBR element carries an SBR header and codes its envelopes and noise floors in frequency
    /// only (`bs_df_env` and `bs_df_noise` all 0, ISO/IEC 14496-3 4.5.2.8.2), and its PS, if
    /// any, carries a PS header and codes IID and ICC in frequency only (8.4). A block with no
    /// SBR is independent; one whose SBR does not parse is not. `outputSampleRate` is the SBR
    /// rate (twice the core's).
    public func isIndependentOfEarlierBlocks(outputSampleRate: Int) -> Bool {
        var independent = true
        forEachSBRElement { fill, channels in
            var parser = SBRStreamParser(outputSampleRate: outputSampleRate)
            guard let data = Self.sbrData(of: fill, channels: channels, parser: &parser), data.header != nil,
                  data.channels.allSatisfy({ !$0.envelopeTimeDelta.contains(true) && !$0.noiseTimeDelta.contains(true) }) else {
                independent = false
                return false
            }
            if let extended = data.extendedData {
                var stereo = ParametricStereoParser()
                let frame: ParametricStereoFrame?
                do { frame = try stereo.parse(extendedData: extended) } catch {
                    independent = false
                    return false
                }
                if let frame {
                    if frame.header == nil || frame.iidTimeDelta.contains(true) || frame.iccTimeDelta.contains(true) { independent = false }
                } else if extended.count > 7 {
                    // PS without a header (its modes come from an earlier frame) reads as none.
                    var bits = BitReader(extended.bytes)
                    if (try? bits.readBits(2)) == UInt64(ParametricStereoFrame.extensionID) { independent = false }
                }
            }
            return independent
        }
        return independent
    }
}
