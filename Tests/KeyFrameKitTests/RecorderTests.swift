import Foundation
import KeyFrameKit
import Synchronization
import Testing
import TestSupport

/// ``LiveEncoding``, ``AACRecorder`` and ``Recording`` through ALSA's `file` plugin (no sound card, no clock):
/// the captured PCM is known, so what comes out can be checked sample for sample.
@Suite(.blocking) struct RecorderTests {
    static let rate = 44100

    /// A 1 kHz stereo s16 tone at −12 dBFS peak, `frames` long.
    static func tone(frames: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frames * 4)
        for index in 0..<frames {
            let value = Int16((0.25 * 32767 * sin(2 * Double.pi * 1000 * Double(index) / Double(rate))).rounded())
            let word = UInt16(bitPattern: value)
            for _ in 0..<2 { bytes += [UInt8(word & 0xFF), UInt8(word >> 8)] }
        }
        return bytes
    }

    /// A scratch directory holding `in.raw` (the tone) and a configuration naming `kf_in`.
    static func fixture(frames: Int) throws -> (directory: URL, tone: [UInt8], configuration: ALSAConfiguration) {
        ALSALibrary.silenceDiagnostics()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("RecorderTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tone = tone(frames: frames)
        let input = directory.appendingPathComponent("in.raw")
        try Data(tone).write(to: input)
        let configuration = try ALSAConfiguration("""
            pcm.kf_in { type file slave.pcm { type null } file "/dev/null" infile "\(input.path)" format "raw" }
            """)
        return (directory, tone, configuration)
    }

    @Test("capture → encoder → tee of a callback and a file: the packets decode to the input, and the file is the same stream")
    func liveEncodingFeedsEverySink() throws {
        let (directory, tone, configuration) = try Self.fixture(frames: 30_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let packets = Mutex<[MediaSample]>([])
        let capture = LiveEncoding.Capture(device: "kf_in", alsaConfiguration: configuration, frameLimit: 22_050)
        let encoder = try AudioCodecRegistry.standard.encoder(for: .aac, settings: .init(bitrate: 128_000, format: capture.audio.pcmFormat))
        let config = try #require(encoder.audioSpecificConfig)
        #expect(config.samplingFrequency == 44100 && config.channelConfiguration == 2)
        let file = FilePath(directory.appendingPathComponent("take.m4a").path)
        let output = try MediaFormatRegistry.standard.packetOutput(file)
        let live = try LiveEncoding(capture: capture, encoder: encoder, sinks: [
            .init(CallbackSink<MediaSample> { packet in packets.withLock { $0.append(packet) } }, name: "callback"),
            Tee.Branch(output, name: "file"),
        ])
        #expect(live.priming == 1024)
        try live.start()
        #expect(throws: PipelineError.self) { try live.start() }
        let deadline = ContinuousClock.now + .seconds(20)
        while live.statistics.frames < 22_050 && ContinuousClock.now < deadline { usleep(1000) }
        let summary = try live.finish()
        let received = packets.withLock { $0 }
        #expect(summary.frames == 22_050)
        #expect(summary.packets == Int64(received.count))
        // 22050 frames + 1024 priming, in 1024-frame packets.
        #expect(received.count == (22_050 + 1024 + 1023) / 1024)
        #expect(summary.padding == received.count * 1024 - 22_050 - 1024)
        for (earlier, later) in zip(received, received.dropFirst()) {
            #expect(try later.presentationTime.subtracting(earlier.presentationTime) == MediaTime(value: 1024, timescale: 44100))
        }

        // Decoded and trimmed, it is the tone, within AAC's error.
        let decoder = try AACDecoder(audioSpecificConfig: config, outputSampleFormat: .int16,
                                     trim: AACDecoder.Trim(priming: summary.priming, validFrameCount: summary.frames))
        var pcm: [UInt8] = []
        for packet in received { pcm += try decoder.decode(packet: packet.data) }
        pcm += try decoder.flush()
        #expect(pcm.count == 22_050 * 4)
        let error = Self.rmsDifference(pcm, Array(tone.prefix(pcm.count)))
        #expect(error < 0.01, "RMS difference \(error) of full scale")
        // The file's branch got the same packets and the gapless numbers: it decodes to as many frames.
        var input = try AudioFileInput(path: file)
        var frames = 0
        while let buffer = try input.next() { frames += buffer.frameCount }
        #expect(frames == 22_050)
    }

    @Test("a live encoding that cannot start, or never starts, leaves no file; one whose encoder is for another layout is refused")
    func liveEncodingLeavesNothingBehind() throws {
        let (directory, _, configuration) = try Self.fixture(frames: 1000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = LiveEncoding.Capture(device: "kf_missing", alsaConfiguration: configuration, frameLimit: 1000)
        func made(_ name: String) throws -> (LiveEncoding, String) {
            let path = directory.appendingPathComponent(name).path
            let output = try MediaFormatRegistry.standard.packetOutput(FilePath(path))
            let encoder = try AudioCodecRegistry.standard.encoder(for: .aac, settings: .init(bitrate: 128_000, format: capture.audio.pcmFormat))
            return (try LiveEncoding(capture: capture, encoder: encoder, sinks: [Tee.Branch(output, name: "file")]), path)
        }
        let (failing, failingPath) = try made("missing-device.m4a")
        #expect(throws: PipelineError.self) { try failing.start() }
        #expect(!FileManager.default.fileExists(atPath: failingPath))
        var unstartedPath = ""
        do {
            let (unstarted, path) = try made("never-started.m4a")
            unstartedPath = path
            _ = unstarted.device
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("never-started") }
        #expect(leftovers.isEmpty, "\(unstartedPath): \(leftovers)")

        let mono = try AudioCodecRegistry.standard.encoder(for: .aac, settings: .init(
            bitrate: 64_000, format: PCMFormat(sampleRate: 48_000, channelCount: 1, sampleFormat: .int16)))
        do {
            _ = try LiveEncoding(capture: capture, encoder: mono, sinks: [])
            Issue.record("an encoder for 48 kHz mono was taken for a 44.1 kHz stereo capture")
        } catch {
            #expect("\(error)".contains("48000 Hz, 1 channels") && "\(error)".contains("44100 Hz, 2 channels"), "\(error)")
        }
    }

    @Test("sinks made once the device is open: a factory that fails, or packet sinks without an encoder, leave nothing and close the device")
    func sinkFactoryFailuresLeaveNothing() throws {
        let (directory, tone, configuration) = try Self.fixture(frames: 30_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = LiveEncoding.Capture(device: "kf_in", alsaConfiguration: configuration, frameLimit: 10_000)
        let made = FilePath(directory.appendingPathComponent("made.wav").path)
        // The factory makes a file, then fails as a later output would: it removes the file.
        let failing = try LiveEncoding(capture: capture, encoder: nil, makeSinks: { _ throws(PipelineError) -> LiveEncoding.Sinks in
            var output = try MediaFormatRegistry.standard.pcmOutput(made, as: PCMFileOutput.self)
            output.cancel()
            throw .unsupported("a later output cannot be made")
        })
        let error = #expect(throws: PipelineError.self) { try failing.start() }
        #expect("\(error.map(String.init(describing:)) ?? "")".contains("a later output cannot be made"))
        #expect(failing.parameters != nil, "the device was opened before the sinks were made")
        #expect(!FileManager.default.fileExists(atPath: made.string))
        // Packet sinks without an encoder: refused before capture starts, the file removed.
        let packets = FilePath(directory.appendingPathComponent("packets.m4a").path)
        let orphan = try LiveEncoding(capture: capture, encoder: nil, makeSinks: { _ throws(PipelineError) in
            LiveEncoding.Sinks(packets: [Tee.Branch(try MediaFormatRegistry.standard.packetOutput(packets, as: AudioPacketOutput.self), name: "file")])
        })
        #expect(throws: PipelineError.self) { try orphan.start() }
        #expect(!FileManager.default.fileExists(atPath: packets.string))
        // The device, closed again, records: the WAV alone, no encoder, exactly what was captured.
        let wav = FilePath(directory.appendingPathComponent("take.wav").path)
        let recording = try LiveEncoding(capture: capture, encoder: nil, makeSinks: { progress throws(PipelineError) in
            LiveEncoding.Sinks(pcm: [Tee.Branch(try MediaFormatRegistry.standard.pcmOutput(wav, as: PCMFileOutput.self), name: "file")])
        })
        try recording.start()
        while !recording.job.wait(timeout: .milliseconds(100)) {}
        let summary = try recording.finish()
        #expect(summary.frames == 10_000 && summary.priming == 0 && summary.packets == 0 && recording.bitrate == nil)
        #expect(summary.levels.frameCount == 10_000 && recording.progress.captureStart != nil)
        var reader = try PCMFileReader(wavPath: wav)
        var bytes: [UInt8] = []
        while let chunk = try reader.read(maxFrames: 4096) { bytes += chunk }
        #expect(bytes == Array(tone.prefix(10_000 * 4)))
    }

    @Test("a destination bitrate its encoder refuses is an error before the device or a file is touched")
    func aRefusedDestinationBitrateTouchesNothing() throws {
        let (directory, _, configuration) = try Self.fixture(frames: 10)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("existing.m4a")
        let before = Data("an earlier recording".utf8)
        try before.write(to: output)
        var options = try RecordingOptions(outputPath: FilePath(output.path), configuration: AudioConfiguration(channelCount: 2, sampleRate: 48_000),
                                           device: "kf_nope", alsaConfiguration: configuration)
        options.profile = .ps
        options.bitrate = 32_000
        // HE-AAC v2 at 320 kb/s: refused by the destination's own encoder, at init.
        options.destinations = [try PublishingDestination.parse("icecast://source:x@127.0.0.1:9/live.aac#bitrate=320k")]
        let refused = #expect(throws: PipelineError.self) { try LiveEncoding(recording: options) }
        #expect("\(refused.map(String.init(describing:)) ?? "")".contains("320"), "\(String(describing: refused))")
        #expect(try Data(contentsOf: output) == before)
    }

    @available(*, deprecated, message: "exercises the deprecated AACRecorder wrapper")
    @Test func aacRecorderGivesTheMagicCookieAndPacketsThatDecodeToTheInput() throws {
        let (directory, tone, configuration) = try Self.fixture(frames: 30_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let packets = Mutex<[MediaSample]>([])
        let recorder = try AACRecorder(AACRecorder.Configuration(bitrate: 128_000, device: "kf_in", alsaConfiguration: configuration,
                                                                 frameLimit: 22_050),
                                       onPackets: { new in packets.withLock { $0 += new } })
        // The cookie is an ES_Descriptor holding the ASC, as seed 004 reads it.
        #expect(try AudioSpecificConfig(magicCookie: recorder.magicCookie) == recorder.audioSpecificConfig)
        #expect(recorder.priming == 1024)
        try recorder.start()
        let deadline = ContinuousClock.now + .seconds(20)
        while recorder.statistics.frames < 22_050 && ContinuousClock.now < deadline { usleep(1000) }
        let recorded = try recorder.stop()
        let received = packets.withLock { $0 }
        #expect(recorded.frames == 22_050 && recorded.packets == Int64(received.count))
        let decoder = try AACDecoder(audioSpecificConfig: recorder.audioSpecificConfig, outputSampleFormat: .int16,
                                     trim: AACDecoder.Trim(priming: recorded.priming, validFrameCount: recorded.frames))
        var pcm: [UInt8] = []
        for packet in received { pcm += try decoder.decode(packet: packet.data) }
        pcm += try decoder.flush()
        #expect(Self.rmsDifference(pcm, Array(tone.prefix(pcm.count))) < 0.01)
    }

    /// Issue 22: one lifecycle, awaited: `run()` records to the frame limit and finishes without
    /// a thread of the cooperative pool waiting; the callback recorder runs the same way.
    @available(*, deprecated, message: "exercises the deprecated Recording wrapper")
    @Test func recordingsRunAsync() async throws {
        let (directory, _, configuration) = try Self.fixture(frames: 50_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.m4a").path
        let recording = try Recording(options: try Recording.Options(outputPath: FilePath(output), device: "kf_in",
                                                                     alsaConfiguration: configuration, frameLimit: 20_000))
        let summary = try await recording.run()
        #expect(summary.frames == 20_000 && summary.stopReason == .duration && summary.priming == 1024)
        #expect(recording.stopReason == .duration)
        let packets = Mutex(0)
        let capture = LiveEncoding.Capture(device: "kf_in", alsaConfiguration: configuration, frameLimit: 10_000)
        let live = try LiveEncoding(capture: capture, encoder: try AudioCodecRegistry.standard.encoder(
            for: .aac, settings: .init(bitrate: 128_000, format: capture.audio.pcmFormat)),
                                sinks: [.init(CallbackSink<MediaSample> { _ in packets.withLock { $0 += 1 } }, name: "callback")])
        let recorded = try await live.run()
        #expect(recorded.frames == 10_000 && recorded.packets == Int64(packets.withLock { $0 }))
        #expect(live.job.stopReason == .duration)
    }

    /// A cancelled task stops a recording cleanly: the file is finished with what was captured.
    @Test func cancellingTheTaskStopsTheRecording() async throws {
        let (directory, _, configuration) = try Self.fixture(frames: 50_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.wav").path
        // No frame limit: the file plugin delivers its 50 000 frames, then silence forever.
        let options = try RecordingOptions(outputPath: FilePath(output), device: "kf_in", alsaConfiguration: configuration)
        let recording = try LiveEncoding(recording: options)
        let task = Task { try await recording.run() }
        while recording.progress.frames < 4410 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        let summary = RecordingSummary(options, of: recording, summary: try await task.value)
        #expect(summary.stopReason == .requested && summary.frames >= 4410)
        #expect(FileManager.default.fileExists(atPath: output))
    }

    @Test(arguments: Self.fileContainers)
    func recordingWritesExactlyTheFramesAskedFor(container: MediaFileFormat) throws {
        let (directory, tone, configuration) = try Self.fixture(frames: 50_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.\(container.fileExtensions[0])").path
        let options = try RecordingOptions(outputPath: FilePath(output), device: "kf_in", alsaConfiguration: configuration, frameLimit: 33_333)
        #expect(options.container == container)
        let recording = try LiveEncoding(recording: options)
        try recording.start()
        var waited = 0
        while !recording.job.wait(timeout: .milliseconds(100)) && waited < 200 { waited += 1 }
        #expect(recording.job.stopReason == .duration)
        let summary = RecordingSummary(options, of: recording, summary: try recording.finish())
        #expect(summary.frames == 33_333)
        #expect(summary.stopReason == .duration)
        #expect(!summary.hasOverruns)
        #expect(summary.levels.frameCount == 33_333)
        // −12.04 dBFS peak, −15.05 dBFS RMS.
        #expect(abs(summary.levels.peakDBFS[0] - -12.04) < 0.05 && abs(summary.levels.rmsDBFS[1] - -15.05) < 0.05)

        let decoded: [UInt8]
        switch container {
        case .rawPCM:
            decoded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
            #expect(decoded == Array(tone.prefix(33_333 * 4)))
        case .wav:
            var reader = try PCMFileReader(wavPath: FilePath(output))
            var bytes: [UInt8] = []
            while let chunk = try reader.read(maxFrames: 4096) { bytes += chunk }
            #expect(bytes == Array(tone.prefix(33_333 * 4)))
            decoded = bytes
        case .adts:
            let pcm = directory.appendingPathComponent("decoded.pcm").path
            let result = try Transcode.decode(FilePath(output), to: FilePath(pcm))
            // ADTS keeps the priming and padding: 33 packets of 1024.
            #expect(result.frames == Int64((33_333 + 1024 + 1023) / 1024 * 1024))
            decoded = Array(try [UInt8](Data(contentsOf: URL(fileURLWithPath: pcm))).dropFirst(1024 * 4).prefix(33_333 * 4))
        case .mp4:
            let pcm = directory.appendingPathComponent("decoded.pcm").path
            let result = try Transcode.decode(FilePath(output), to: FilePath(pcm))
            // The edit list gives back exactly the frames recorded.
            #expect(result.frames == 33_333)
            decoded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pcm)))
        default:
            Issue.record("\(container): not a file container")
            return
        }
        #expect(decoded.count == 33_333 * 4)
        #expect(Self.rmsDifference(decoded, Array(tone.prefix(decoded.count))) < 0.01)
    }

    /// The containers a file's extension names (HLS is a directory), but the native ones (MP3,
    /// Ogg Opus, FLAC: written whole, never crash-safe; RecordCommandTests records each).
    static let fileContainers = RecordingOptions.containers.filter { $0 != .hlsPlaylist && !RecordingOptions.nativeContainers.contains($0) }

    @Test func aMissingDeviceLeavesNoFile() throws {
        let (directory, _, configuration) = try Self.fixture(frames: 10)
        defer { try? FileManager.default.removeItem(at: directory) }
        for container in Self.fileContainers {
            let output = directory.appendingPathComponent("missing.\(container.fileExtensions[0])").path
            let recording = try LiveEncoding(recording: RecordingOptions(outputPath: FilePath(output), device: "kf_nope", alsaConfiguration: configuration))
            #expect(throws: PipelineError.self) { try recording.start() }
            #expect(!FileManager.default.fileExists(atPath: output), "\(output) left behind")
        }
        // The native containers too, at 48 kHz (Opus's rate).
        let configuration48 = try AudioConfiguration(channelCount: 2, sampleRate: 48000)
        for container in RecordingOptions.nativeContainers {
            let output = directory.appendingPathComponent("missing.\(container.fileExtensions[0])").path
            let recording = try LiveEncoding(recording: RecordingOptions(outputPath: FilePath(output), configuration: configuration48,
                                                                         device: "kf_nope", alsaConfiguration: configuration))
            #expect(throws: PipelineError.self) { try recording.start() }
            #expect(!FileManager.default.fileExists(atPath: output), "\(output) left behind")
        }
        #expect(throws: PipelineError.self) { try RecordingOptions(outputPath: "x.mkv") }
    }

    @Test func aMissingDeviceLeavesAnExistingFileAsItWas() throws {
        let (directory, _, configuration) = try Self.fixture(frames: 10)
        defer { try? FileManager.default.removeItem(at: directory) }
        for container in Self.fileContainers {
            for crashSafe in [false, true] {
                let output = directory.appendingPathComponent("existing.\(container.fileExtensions[0])")
                let before = Data("an earlier recording".utf8)
                try before.write(to: output)
                let recording = try LiveEncoding(recording: RecordingOptions(outputPath: FilePath(output.path), device: "kf_nope",
                                                                             alsaConfiguration: configuration, crashSafe: crashSafe))
                #expect(throws: PipelineError.self) { try recording.start() }
                #expect(try Data(contentsOf: output) == before, "\(output.lastPathComponent) (crash-safe \(crashSafe)) was changed")
            }
        }
    }

    @Test func aRecordingStartsOnce() throws {
        let (directory, _, configuration) = try Self.fixture(frames: 50_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("once.wav").path
        let recording = try LiveEncoding(recording: RecordingOptions(outputPath: FilePath(output), device: "kf_in", alsaConfiguration: configuration,
                                                                     frameLimit: 10_000))
        try recording.start()
        #expect(throws: PipelineError.self) { try recording.start() }
        while !recording.job.wait(timeout: .milliseconds(100)) {}
        let summary = try recording.finish()
        #expect(summary.frames == 10_000)
        var reader = try PCMFileReader(wavPath: FilePath(output))
        var frames = 0
        while let chunk = try reader.read(maxFrames: 4096) { frames += chunk.count / 4 }
        #expect(frames == 10_000)
    }

    @Test func playbackRendersWhatDecodeWrites() throws {
        let (directory, _, configuration) = try Self.fixture(frames: 30_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = directory.appendingPathComponent("in.m4a").path
        let recording = try LiveEncoding(recording: RecordingOptions(outputPath: FilePath(m4a), device: "kf_in", alsaConfiguration: configuration,
                                                                     frameLimit: 25_000))
        try recording.start()
        while !recording.job.wait(timeout: .milliseconds(100)) {}
        _ = try recording.finish()

        let rendered = directory.appendingPathComponent("rendered.raw").path
        let output = try ALSAConfiguration("""
            pcm.kf_out { type file slave.pcm { type null } file "\(rendered)" format "raw" }
            """)
        let played = try Playback.play(FilePath(m4a), device: "kf_out", alsaConfiguration: output)
        #expect(played.frames == 25_000 && played.underruns == 0)
        let decoded = directory.appendingPathComponent("decoded.pcm").path
        _ = try Transcode.decode(FilePath(m4a), to: FilePath(decoded))
        let renderedBytes = try Data(contentsOf: URL(fileURLWithPath: rendered))
        let decodedBytes = try Data(contentsOf: URL(fileURLWithPath: decoded))
        #expect(renderedBytes.count == 25_000 * 4)
        #expect(renderedBytes == decodedBytes)
    }

    /// RMS of the difference of two s16 buffers, as a fraction of full scale.
    static func rmsDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        let count = min(a.count, b.count) / 2
        guard count > 0 else { return .infinity }
        var sum = 0.0
        for index in 0..<count {
            let x = Double(Int16(bitPattern: UInt16(a[2 * index]) | UInt16(a[2 * index + 1]) << 8))
            let y = Double(Int16(bitPattern: UInt16(b[2 * index]) | UInt16(b[2 * index + 1]) << 8))
            sum += (x - y) * (x - y)
        }
        return (sum / Double(count)).squareRoot() / 32768
    }
}
