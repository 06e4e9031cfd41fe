internal import MediaCore

extension FillElement {
    /// A fill element of `extension_type` EXT_SBR_DATA (13) carrying `sbr`
    /// (ISO/IEC 14496-3, 4.4.2.1 Table 4.11 and 4.4.2.8): 4 type bits, `sbr_extension_data()`,
    /// zero fill to the byte. `history` is updated only on success; a payload over
    /// ``maximumPayloadBytes`` is ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)``.
    public init(sbr: SBRExtensionData, tables: SBRFrequencyTables, history: inout [SBRChannelHistory]) throws(AACBitstreamError) {
        var writer = BitWriter()
        var updated = history
        try sbr.write(to: &writer, tables: tables, history: &updated)
        try self.init(extensionType: ExtensionType.sbrData, bits: writer.bits)
        history = updated
    }
}
