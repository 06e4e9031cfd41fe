extension Transcode {
    /// Encodes PCM from `input` to an M4A at `outputPath` with a sample-exact edit list: its
    /// `media_time` is the encoder's priming and its duration exactly the input's length (in a
    /// movie timescale equal to the sample rate), with iTunSMPB and the encoder tag.
    ///
    /// - Parameter fragmentDuration: write fragmented (crash-safe) with a fragment this long.
    public static func encodeToM4A(_ input: inout PCMFileReader, outputPath: String, bitrate: Int, coder: AACEncoder.Coder = .twoLoop,
                                   fragmentDuration: MediaTime? = nil,
                                   progress: (Progress) -> Void = { _ in }) throws(PipelineError) -> EncodeSummary {
        let format = input.format
        let encoder: AACEncoder
        do { encoder = try AACEncoder(format: format, bitrate: bitrate, coder: coder) } catch { throw .codec(error) }
        let muxer = MP4Muxer(configuration: MuxerConfiguration(outputPath: outputPath, mediaTypes: .audio,
                                                               fragmentDuration: fragmentDuration,
                                                               encoderName: "KeyFrameKit (libavcodec aac)"))
        do { try muxer.start() } catch { throw .container(error) }
        // The priming is known now; a fragmented file writes its edit list before the first sample.
        muxer.setGapless(priming: encoder.priming, validFrameCount: 0)
        do throws(PipelineError) {
            let frames = try encode(&input, with: encoder, progress: progress) { packets throws(PipelineError) in
                for packet in packets {
                    do throws(MP4Error) { try muxer.append(packet) } catch { throw .container(error) }
                }
            }
            muxer.setGapless(priming: encoder.priming, validFrameCount: frames)
            do { try muxer.finish() } catch { throw .container(error) }
        } catch {
            muxer.cancel()
            throw error
        }
        return EncodeSummary(inputFrames: encoder.inputFrameCount, packets: encoder.packetCount, priming: encoder.priming,
                             padding: encoder.padding ?? 0, warnings: input.warnings)
    }
}
