@testable import AudioIO
import Foundation
import MediaCore
import Synchronization
import Testing
import TestSupport

/// ALSA through the `file` plugin, loaded in-process: no sound card and no environment needed.
@Suite(.blocking) struct AudioIOTests {
    init() { ALSALibrary.silenceDiagnostics() }

    static let format = PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16)

    /// A 1 kHz stereo s16 tone at 44.1 kHz, `frames` long.
    static func tone(frames: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frames * 4)
        for index in 0..<frames {
            let value = Int16(10_000 * sin(2 * Double.pi * 1000 * Double(index) / 44100))
            let word = UInt16(bitPattern: value)
            for _ in 0..<2 { bytes += [UInt8(word & 0xFF), UInt8(word >> 8)] }
        }
        return bytes
    }

    /// A directory removed at the end of the test.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("AudioIOTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A capture PCM named `kf_test` that reads `input`.
    static func captureConfiguration(input: URL) throws -> ALSAConfiguration {
        try ALSAConfiguration("""
            pcm.kf_test { type file slave.pcm { type null } file "/dev/null" infile "\(input.path)" format "raw" }
            """)
    }

    @Test func pcmDeviceCapturesTheFileThenSilence() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.raw")
        let tone = Self.tone(frames: 4410)
        try Data(tone).write(to: input)

        let device = try PCMDevice(name: "kf_test", direction: .capture, configuration: Self.captureConfiguration(input: input))
        let granted = try device.configure(format: Self.format, periodFrames: 882)
        #expect(granted.format == Self.format)
        #expect(granted.periodFrames > 0 && granted.bufferFrames >= granted.periodFrames)
        // Period by period, as AudioCapture reads (the file plugin returns silence, not the
        // file, for a single read longer than the buffer).
        var captured: [UInt8] = []
        while captured.count < 6000 * 4 { captured += try device.read(frames: granted.periodFrames) }
        let matches = Array(captured.prefix(tone.count)) == tone
        #expect(matches)
        #expect(captured.dropFirst(tone.count).allSatisfy { $0 == 0 })
        #expect(device.xrunCount == 0)
    }

    @Test func audioCaptureDeliversThePeriodsInOrderOnTheStream() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.raw")
        let tone = Self.tone(frames: 44100)
        try Data(tone).write(to: input)

        let capture = AudioCapture(configuration: .default, device: "kf_test", periodFrames: 882, queueCapacity: 1000,
                                   alsaConfiguration: try Self.captureConfiguration(input: input))
        try capture.start()
        let period = try #require(capture.parameters?.periodFrames)
        var received: [MediaSample] = []
        var bytes: [UInt8] = []
        for await sample in capture.samples {
            received.append(sample)
            bytes += sample.data
            if bytes.count >= tone.count { break }
        }
        capture.stop()

        let matches = Array(bytes.prefix(tone.count)) == tone
        #expect(matches)
        for sample in received {
            #expect(sample.format == .pcm(AudioConfiguration.default.pcmFormat))
            #expect(sample.data.count == period * 4)
            #expect(sample.duration == MediaTime(value: Int64(period), timescale: 44100))
        }
        for (earlier, later) in zip(received, received.dropFirst()) {
            #expect(try later.presentationTime >= earlier.presentationTime.adding(earlier.duration))
        }
        let statistics = capture.statistics
        #expect(statistics.periods >= received.count)
        #expect(statistics.deviceXruns == 0)
        #expect(capture.failure == nil)
    }

    @Test func audioCaptureCallbackGetsTheSameBytesAndOverrunsAreCounted() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.raw")
        let tone = Self.tone(frames: 8820)
        try Data(tone).write(to: input)

        // The file plugin has no clock, so a consumer that takes 5 ms per period falls behind.
        let collected = Mutex<[UInt8]>([])
        let capture = AudioCapture(configuration: .default, device: "kf_test", periodFrames: 882, queueCapacity: 4,
                                   alsaConfiguration: try Self.captureConfiguration(input: input)) { sample in
            collected.withLock { $0 += sample.data }
            usleep(5000)
        }
        try capture.start()
        while capture.statistics.consumerOverruns == 0 { usleep(1000) }
        capture.stop()
        let bytes = collected.withLock { $0 }
        #expect(bytes.count >= 4 * 882 * 4)
        #expect(Array(bytes.prefix(4 * 882 * 4)) == Array(tone.prefix(4 * 882 * 4)))
        #expect(capture.statistics.consumerOverruns > 0)
        #expect(capture.statistics.deviceXruns == 0)
    }

    @Test func playerWritesExactlyWhatWasPlayed() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.raw")
        let tone = Self.tone(frames: 10_000)
        let configuration = try ALSAConfiguration("""
            pcm.kf_out { type file slave.pcm { type null } file "\(output.path)" format "raw" }
            """)
        do {
            let player = try AudioPlayer(format: Self.format, device: "kf_out", alsaConfiguration: configuration)
            for chunk in stride(from: 0, to: tone.count, by: 4000) {
                let data = Array(tone[chunk..<min(chunk + 4000, tone.count)])
                try player.write(MediaSample(data: data, presentationTime: .zero,
                                             duration: MediaTime(value: Int64(data.count / 4), timescale: 44100),
                                             format: .pcm(Self.format)))
            }
            try player.drain()
            #expect(player.underrunCount == 0)
        }
        let written = try [UInt8](Data(contentsOf: output))
        #expect(written == tone)
    }

    @Test func playerRejectsAnotherFormat() throws {
        let configuration = try ALSAConfiguration(#"pcm.kf_out { type file slave.pcm { type null } file "/dev/null" format "raw" }"#)
        let player = try AudioPlayer(format: Self.format, device: "kf_out", alsaConfiguration: configuration)
        let mono = PCMFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .int16)
        #expect(throws: ALSAError.formatMismatch(device: "kf_out", expected: Self.format, got: .pcm(mono))) {
            try player.write(MediaSample(data: [0, 0], presentationTime: .zero,
                                         duration: MediaTime(value: 1, timescale: 44100), format: .pcm(mono)))
        }
    }

    @Test func missingDeviceIsATypedErrorNamingIt() throws {
        let configuration = try ALSAConfiguration("")
        #expect(throws: ALSAError.deviceNotFound("kf_missing")) {
            try PCMDevice(name: "kf_missing", direction: .capture, configuration: configuration)
        }
        let capture = AudioCapture(configuration: .default, device: "kf_missing", alsaConfiguration: configuration)
        let error = #expect(throws: ALSAError.self) { try capture.start() }
        #expect(error == .deviceNotFound("kf_missing"))
        #expect(error?.description.contains("'kf_missing'") == true)
    }

    @Test func invalidConfigurationIsAnError() {
        #expect(throws: ALSAError.self) { try ALSAConfiguration("pcm.broken { type") }
    }

    @Test func deviceListReturns() throws {
        let devices = try AudioDeviceList.all()
        for device in devices { #expect(!device.name.isEmpty) }
        #expect(try AudioDeviceList.capture().count <= devices.count)
        #expect(try AudioDeviceList.playback().count <= devices.count)
    }
}

/// The frame limit, the end callback, and a capture released without `stop()`.
@Suite(.blocking) struct AudioCaptureEndingTests {
    @Test func frameLimitDeliversExactlyThatManyFramesThenEnds() throws {
        let directory = try AudioIOTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.raw")
        let tone = AudioIOTests.tone(frames: 20_000)
        try Data(tone).write(to: input)
        let collected = Mutex<[UInt8]>([])
        let ended = Mutex<[AudioCapture.Ending]>([])
        // 12345 frames is not a whole number of 882-frame periods: the last one is cut.
        let capture = AudioCapture(configuration: .default, device: "kf_test", periodFrames: 882, queueCapacity: 100,
                                   frameLimit: 12345, alsaConfiguration: try AudioIOTests.captureConfiguration(input: input),
                                   onSample: { sample in collected.withLock { $0 += sample.data } },
                                   onEnd: { ending in ended.withLock { $0.append(ending) } })
        try capture.start()
        let deadline = ContinuousClock.now + .seconds(20)
        while ended.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline { usleep(1000) }
        capture.stop()
        #expect(ended.withLock { $0 } == [.frameLimitReached])
        let bytes = collected.withLock { $0 }
        #expect(bytes.count == 12345 * 4)
        #expect(bytes == Array(tone.prefix(12345 * 4)))
        #expect(capture.statistics.frames == 12345)
        #expect(capture.statistics.lostFrames == 0)
    }

    @Test func releasingARunningCaptureStopsIt() throws {
        let directory = try AudioIOTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.raw")
        try Data(AudioIOTests.tone(frames: 4410)).write(to: input)
        let ended = Mutex<[AudioCapture.Ending]>([])
        weak var weakCapture: AudioCapture?
        do {
            let capture = AudioCapture(configuration: .default, device: "kf_test", periodFrames: 882,
                                       alsaConfiguration: try AudioIOTests.captureConfiguration(input: input),
                                       onSample: { _ in }, onEnd: { ending in ended.withLock { $0.append(ending) } })
            try capture.start()
            weakCapture = capture
        }
        // The capture thread holds only the capture's shared state, so the last reference going
        // away runs deinit, which stops and joins the threads.
        #expect(weakCapture == nil)
        #expect(ended.withLock { $0 } == [.stopped])
    }

    @Test func enoentAndEbusyMeanNotFoundAndBusyOnlyWhenOpening() {
        #expect(ALSAError.error(-ENOENT, device: "x", opening: true, operation: "open") == .deviceNotFound("x"))
        #expect(ALSAError.error(-EBUSY, device: "x", opening: true, operation: "open") == .deviceBusy("x"))
        guard case .alsa(_, let operation, let code, _) = ALSAError.error(-ENOENT, device: "x", operation: "snd_pcm_readi") else {
            Issue.record("-ENOENT from a read became a not-found error")
            return
        }
        #expect(operation == "snd_pcm_readi" && code == -ENOENT)
    }
}
