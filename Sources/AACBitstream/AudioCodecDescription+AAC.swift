public import MediaCore

extension AudioCodecDescription {
    /// MPEG-4 AAC in ISO BMFF (ISO/IEC 14496-14 5.6): an `mp4a` entry whose `esds` holds the
    /// AudioSpecificConfig (14496-3 1.6.2.1) with the track's buffer size and bitrates;
    /// `mp4a.40.` and the object type as RFC 6381 3.3 names it (5 when SBR is signalled, 29 for
    /// PS); a roll of -1, as FFmpeg and Apple write it; and every packet the config's frame
    /// length (1024 or 960, 512 or 480 for low delay, doubled by SBR at the output rate).
    public static let aac = AudioCodecDescription(
        codec: .aac, sampleEntryType: "mp4a", configurationBox: "esds",
        check: { format throws(AudioSampleEntry.Refusal) in
            do { _ = try AudioSpecificConfig(bytes: format.decoderConfiguration) } catch {
                throw AudioSampleEntry.Refusal("its AudioSpecificConfig does not parse: \(error)")
            }
        },
        sampleEntry: { format, figures in
            var boxes: [AudioSampleEntry.Box] = []
            if let config = try? AudioSpecificConfig(bytes: format.decoderConfiguration),
               var descriptor = try? ESDescriptor(audioSpecificConfig: config, bufferSizeDB: UInt32(clamping: min(figures.largestPacket, 0xFF_FFFF)),
                                                  maxBitrate: UInt32(clamping: max(figures.averageBitrate, figures.peakBitrate)),
                                                  averageBitrate: UInt32(clamping: figures.averageBitrate)) {
                descriptor.esID = UInt16(clamping: figures.trackID)
                boxes.append(AudioSampleEntry.Box(type: "esds", payload: (try? descriptor.esdsBoxPayload()) ?? []))
            }
            // 14496-14: 2 channels unless the stream is mono.
            return AudioSampleEntry(channelCount: format.channelCount == 1 ? 1 : 2, sampleRate: format.sampleRate, boxes: boxes)
        },
        codecsParameter: { format in
            guard let config = try? AudioSpecificConfig(bytes: format.decoderConfiguration) else { return "mp4a.40.2" }
            return "mp4a.40.\(config.profile.rawValue)"
        },
        roll: { _ in -1 },
        fixedPacketDuration: { format in
            if format.framesPerPacket > 0 { return format.framesPerPacket }
            return (try? AudioSpecificConfig(bytes: format.decoderConfiguration))?.framesPerPacket ?? 1024
        })
}
