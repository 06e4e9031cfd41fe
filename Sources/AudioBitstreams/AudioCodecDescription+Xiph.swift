public import MediaCore

extension AudioCodecDescription {
    /// Opus in ISO BMFF (opus-codec.org, "Encapsulation of Opus in ISO Base Media File Format"
    /// 4.3): an `Opus` entry at 48 kHz whose `dOps` holds the `OpusHead` fields big-endian; the
    /// decoder configuration is the `OpusHead` (RFC 7845 5.1), as libavcodec takes it. The edit
    /// list starts at the pre-skip; a roll of 80 ms of packets (4 of 20 ms: 4.4's pre-roll), so
    /// that a fragment decodes right from its first sample; packets of varying length. `CODECS`
    /// `Opus`, the sample entry's name (RFC 6381 3.3).
    public static let opus = AudioCodecDescription(
        codec: .opus, sampleEntryType: "Opus", configurationBox: "dOps",
        check: { format throws(AudioSampleEntry.Refusal) in
            do { _ = try OpusHeader(bytes: format.decoderConfiguration) } catch {
                throw AudioSampleEntry.Refusal("its OpusHead does not parse: \(error)")
            }
        },
        sampleEntry: { format, _ in
            let header = try? OpusHeader(bytes: format.decoderConfiguration)
            return AudioSampleEntry(channelCount: format.channelCount, sampleRate: 48000,
                                    boxes: [AudioSampleEntry.Box(type: "dOps", payload: header?.dOpsPayload ?? [])])
        },
        codecsParameter: { _ in "Opus" },
        roll: { format in
            // 80 ms at 48 kHz over the packets' length (20 ms when a reader does not know it).
            let packet = format.framesPerPacket > 0 ? format.framesPerPacket : 960
            return -((3840 + packet - 1) / packet)
        },
        configurationInBox: { payload in (try? OpusHeader(dOpsPayload: payload))?.bytes })

    /// FLAC in ISO BMFF (xiph, "Encapsulation of FLAC in ISO Base Media File Format" 3.3): an
    /// `fLaC` entry whose `dfLa` holds the STREAMINFO block (RFC 9639 8.2), the decoder
    /// configuration libavcodec takes; the entry's sample size is the stream's bit depth. Every
    /// frame decodes alone (no roll); blocks vary in length (the last is short). `CODECS` `fLaC`.
    public static let flac = AudioCodecDescription(
        codec: .flac, sampleEntryType: "fLaC", configurationBox: "dfLa",
        check: { format throws(AudioSampleEntry.Refusal) in
            do { _ = try FLACStreamInfo(bytes: format.decoderConfiguration) } catch {
                throw AudioSampleEntry.Refusal("its STREAMINFO does not parse: \(error)")
            }
        },
        sampleEntry: { format, _ in
            let info = try? FLACStreamInfo(bytes: format.decoderConfiguration)
            return AudioSampleEntry(channelCount: format.channelCount, sampleSize: info?.bitsPerSample ?? 16,
                                    sampleRate: format.sampleRate <= 0xFFFF ? format.sampleRate : 0,
                                    boxes: [AudioSampleEntry.Box(type: "dfLa", payload: info?.dfLaPayload ?? [])])
        },
        codecsParameter: { _ in "fLaC" },
        configurationInBox: { payload in (try? FLACStreamInfo(dfLaPayload: payload))?.bytes })

    /// Apple Lossless in ISO BMFF: an `alac` entry holding an `alac` full box with the
    /// `ALACSpecificConfig`; the decoder configuration is the 36-byte magic cookie libavcodec
    /// takes. Every packet decodes alone; the last is short. `CODECS` `alac`.
    public static let alac = AudioCodecDescription(
        codec: .alac, sampleEntryType: "alac", configurationBox: "alac",
        check: { format throws(AudioSampleEntry.Refusal) in
            do { _ = try ALACSpecificConfig(cookie: format.decoderConfiguration) } catch {
                throw AudioSampleEntry.Refusal("its magic cookie does not parse: \(error)")
            }
        },
        sampleEntry: { format, _ in
            let config = try? ALACSpecificConfig(cookie: format.decoderConfiguration)
            return AudioSampleEntry(channelCount: format.channelCount, sampleSize: config?.bitDepth ?? 16,
                                    sampleRate: format.sampleRate <= 0xFFFF ? format.sampleRate : 0,
                                    boxes: [AudioSampleEntry.Box(type: "alac", payload: config?.alacBoxPayload ?? [])])
        },
        codecsParameter: { _ in "alac" },
        configurationInBox: { payload in (try? ALACSpecificConfig(bytes: payload.dropFirst(4)))?.cookie })
}
