import Foundation
import KeyFrameKit
import SystemPackage
import Testing

/// A codec, a container and a destination that KeyFrameKit does not have, registered from
/// outside the package (no `@testable`), run through the jobs as a user's program would.
@Suite struct RegisteredExtensionTests {
    /// KeyFrameKit's formats and the `.rev` container, its packets decoded by the registry that
    /// knows the reversing codec.
    static let formats: MediaFormatRegistry = {
        var formats = MediaFormatRegistry.standard(codecs: .withReversedPCM)
        formats.register(.rev)
        return formats
    }()

    /// A scratch directory, removed after `body`.
    func inDirectory(_ body: (FilePath) throws -> Void) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("extension-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        try body(FilePath(url.path))
    }

    /// 48 kHz stereo 16-bit: `frames` frames of a sweep, written as a WAV by the registry.
    func writeWAV(_ path: FilePath, frames: Int) throws -> [UInt8] {
        let format = PCMFormat(sampleRate: 48_000, channelCount: 2, sampleFormat: .int16)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frames * format.bytesPerFrame)
        for frame in 0..<frames {
            let value = Int16(truncatingIfNeeded: Int(12_000 * sin(Double(frame * frame) / 4e6)))
            for channel in 0..<2 {
                let sample = channel == 0 ? value : value / 2
                bytes.append(UInt8(truncatingIfNeeded: sample))
                bytes.append(UInt8(truncatingIfNeeded: sample >> 8))
            }
        }
        var sink = try Self.formats.pcmOutput(path)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 4096 * format.bytesPerFrame, bytes.count)
            try sink.write(PCMBuffer(format: format, bytes: Array(bytes[offset..<end])))
            offset = end
        }
        try sink.finish()
        return bytes
    }

    /// Every byte of PCM `path` holds, read through `formats`.
    func pcm(of path: FilePath, formats: MediaFormatRegistry = RegisteredExtensionTests.formats) throws -> [UInt8] {
        var input = try AudioFileInput(path: path, registry: formats)
        var bytes: [UInt8] = []
        while let buffer = try input.next() { bytes += buffer.bytes }
        return bytes
    }

    @Test("encode and decode through a registered codec and container give the PCM back exactly")
    func convertShaped() throws {
        try inDirectory { directory in
            let wav = directory.appending("in.wav"), rev = directory.appending("in.rev"), back = directory.appending("back.wav")
            let original = try writeWAV(wav, frames: 10_000)

            var options = Transcode.EncodeOptions()
            options.codec = .reversedPCM
            options.codecs = .withReversedPCM
            options.formats = Self.formats
            let encoded = try Transcode.encode(try AudioFileInput(path: wav, registry: Self.formats), to: rev, options: options)
            #expect(encoded.packets == 10, "9 whole packets of 1024 frames and one of 784")
            #expect(encoded.inputFrames == 10_000)
            #expect(Self.formats.detect(rev) == .rev)
            let head = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rev.string)).prefix(4))
            #expect(head == Array("REV1".utf8), "the container's writer wrote it")

            let input = try AudioFileInput(path: rev, registry: Self.formats)
            #expect(input.description == "REV (reversed-pcm)")
            #expect(input.pcmFormat == PCMFormat(sampleRate: 48_000, channelCount: 2, sampleFormat: .int16))

            let decoded = try Transcode.decode(rev, to: back, formats: Self.formats)
            #expect(decoded.frames == 10_000)
            #expect(try pcm(of: back) == original)
        }
    }

    @Test("a registered container's name picks its writer; the registry without it refuses the file in words")
    func registryIsTheOnlyWay() throws {
        try inDirectory { directory in
            let wav = directory.appending("in.wav"), rev = directory.appending("in.rev")
            _ = try writeWAV(wav, frames: 2048)
            #expect(Self.formats.format(nameOf: rev) == .rev)
            #expect(MediaFormatRegistry.standard.format(nameOf: rev) == nil)

            // The AAC encoder into a REV container: the container takes any codec's packets.
            var options = Transcode.EncodeOptions()
            options.formats = Self.formats
            let aac = try Transcode.encode(try AudioFileInput(path: wav), to: rev, options: options)
            #expect(aac.packets > 0)
            let packets = try Self.formats.packetInput(rev)
            #expect(packets.audioFormat?.codec == .aac)
            // AAC in the registered container decodes (raw data blocks, configured by its
            // AudioSpecificConfig): every packet's 1024 frames, the priming included (REV keeps
            // no edit list).
            let back = directory.appending("aac.wav")
            let decoded = try Transcode.decode(rev, to: back, formats: Self.formats)
            #expect(decoded.frames == aac.packets * 1024)
            #expect(try AudioFileInput(path: rev, registry: Self.formats).description == "REV (aac)")

            // Jobs that read AAC as KeyFrameKit's reader refuse another reader's file by name.
            var reversed = Transcode.EncodeOptions()
            reversed.codec = .reversedPCM
            reversed.codecs = .withReversedPCM
            reversed.formats = Self.formats
            _ = try Transcode.encode(try AudioFileInput(path: wav), to: rev, options: reversed)
            #expect {
                _ = try Self.formats.aacInput(rev)
            } throws: { error in
                "\(error)".contains("REV of reversed-pcm")
            }
            // The default codecs do not decode it: the decoder is looked up by the codec the
            // container says, and the message names it.
            #expect {
                _ = try AudioFileInput(path: rev, registry: { var formats = MediaFormatRegistry.standard; formats.register(.rev); return formats }())
            } throws: { error in
                "\(error)".contains("reversed-pcm")
            }
            // Without the entry, KeyFrameKit does not know the file.
            #expect(throws: PipelineError.self) { _ = try AudioFileInput(path: rev) }
        }
    }

    @Test("one registered source teed into several registered sinks, as a packager writes renditions")
    func packageShaped() throws {
        try inDirectory { directory in
            let wav = directory.appending("in.wav"), rev = directory.appending("in.rev")
            let original = try writeWAV(wav, frames: 5000)
            var options = Transcode.EncodeOptions()
            options.codec = .reversedPCM
            options.codecs = .withReversedPCM
            options.formats = Self.formats
            _ = try Transcode.encode(try AudioFileInput(path: wav), to: rev, options: options)

            let copies = ["a.rev", "b.rev"].map { directory.appending($0) }
            var source = AnyPacketFileSource(try Self.formats.packetInput(rev))
            var branches: [Tee<MediaSample>.Branch] = []
            for copy in copies { branches.append(Tee.Branch(try Self.formats.packetOutput(copy), name: copy.lastComponent!.string)) }
            var tee = Tee(branches)
            let report = try Pump.run(from: &source, into: &tee)
            #expect(report.elements == 5)
            for copy in copies {
                #expect(try Data(contentsOf: URL(fileURLWithPath: copy.string)) == Data(contentsOf: URL(fileURLWithPath: rev.string)))
                #expect(try pcm(of: copy) == original)
            }
        }
    }

    @Test("a registered codec's description puts it in an MP4 and in HLS segments, and reads it back")
    func describedInMP4() throws {
        try inDirectory { directory in
            let wav = directory.appending("in.wav"), m4a = directory.appending("in.m4a"), rev = directory.appending("in.rev")
            let original = try writeWAV(wav, frames: 5000)
            var options = Transcode.EncodeOptions()
            options.codec = .reversedPCM
            options.codecs = .withReversedPCM
            options.formats = Self.formats
            _ = try Transcode.encode(try AudioFileInput(path: wav), to: m4a, options: options)
            _ = try Transcode.encode(try AudioFileInput(path: wav), to: rev, options: options)

            // The MP4 names the codec by its registered sample entry, and reads back as it.
            let demuxer = MP4Demuxer(source: try FileByteSource(path: m4a), configuration: DemuxerConfiguration(mediaTypes: .audio))
            try demuxer.start()
            let track = try #require(demuxer.audioTrack)
            #expect(track.sampleEntry?.type == "rvpc")
            #expect(track.sampleEntry?.configurationBoxes["rvcC"] == Array("int16".utf8))
            let format = try track.formatDescription(audioCodecs: AudioCodecRegistry.withReversedPCM.descriptions)
            guard case .audio(let stream) = format else { Issue.record("not audio: \(format)"); return }
            #expect(stream.codec == .reversedPCM)
            #expect(stream.framesPerPacket == 1024)
            #expect(try track.formatDescription() != format, "without the description it is an unknown entry")
            var decoder = try AudioCodecRegistry.withReversedPCM.decoder(for: stream.codec, profile: nil,
                                                                         settings: .init(audioSpecificConfig: nil))
            var decoded: [UInt8] = []
            while let sample = try demuxer.nextAudioSample() {
                var packet = sample
                packet.format = format
                for buffer in try decoder.transform(packet) { decoded += buffer.bytes }
            }
            #expect(decoded == original)

            // The default registry does not describe it, and says so.
            var plain = Transcode.EncodeOptions()
            plain.codec = .reversedPCM
            plain.codecs = {
                var codecs = AudioCodecRegistry.standard
                codecs.register(AudioCodecRegistry.EncoderEntry(codec: .reversedPCM, name: "reverser") { ReversingEncoder(settings: $0) })
                return codecs
            }()
            #expect {
                _ = try Transcode.encode(try AudioFileInput(path: wav), to: directory.appending("plain.m4a"), options: plain)
            } throws: { error in
                "\(error)".contains("reversed-pcm") && "\(error)".contains("register the codec's description")
            }

            // HLS: CMAF segments with the same sample entry, and the codec's CODECS name.
            var source = AnyPacketFileSource(try Self.formats.packetInput(rev))
            var hls = try HLSSegmentOutput(directory: directory.appending("hls"), segmentDuration: 1,
                                           audioCodecs: AudioCodecRegistry.withReversedPCM.descriptions)
            _ = try Pump.run(from: &source, into: &hls)
            #expect(hls.codecsParameter == "rvpc")
            let header = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.appending("hls/init.mp4").string)))
            #expect(header.indices.contains { header[$0...].starts(with: Array("rvpc".utf8)) })
            #expect(header.indices.contains { header[$0...].starts(with: Array("rvcC".utf8)) })
            #expect(StreamManifests.codecs(of: stream, describedBy: AudioCodecRegistry.withReversedPCM.descriptions) == "rvpc")
        }
    }

    @Test("a registered object store takes a package: media first, then the playlists and the page, the key masked")
    func packageIntoARegisteredStore() throws {
        try inDirectory { directory in
            let wav = directory.appending("in.wav")
            _ = try writeWAV(wav, frames: 48_000 * 5)
            let bucket = "show-\(UInt32.random(in: 0...UInt32.max))"
            #expect(DestinationRegistry.withMemory.namesStore("mem://\(bucket)?key=secret"))
            let store = try DestinationRegistry.withMemory.store(for: "mem://\(bucket)?key=secret")
            #expect(store.description == "mem://\(bucket)?key=****")
            let summary = try Packaging.hls(wav, to: store, options: .init(segmentDuration: 2, bitrates: [64_000, 128_000]))
            #expect(summary.playlist == "master.m3u8")
            let held = MemoryBuckets.shared.bucket(bucket)
            #expect(Set(held.objects.keys).isSuperset(of: ["master.m3u8", "64k/index.m3u8", "128k/index.m3u8", "64k/init.mp4", "128k/segment-00001.m4s"]))
            // No playlist is put before what it names; the master playlist comes after the
            // renditions', and the player page that plays it last.
            let puts = held.log.map { String($0.dropFirst("put ".count)) }
            #expect(held.log.allSatisfy { $0.hasPrefix("put ") })
            let firstPlaylist = try #require(puts.firstIndex { $0.hasSuffix(".m3u8") })
            #expect(puts[firstPlaylist...].dropLast().allSatisfy { $0.hasSuffix(".m3u8") })
            #expect(puts.suffix(2) == ["master.m3u8", "index.html"], "\(puts)")
            // What the store holds is a package: the master playlist names both renditions.
            let master = String(decoding: held.objects["master.m3u8"] ?? [], as: UTF8.self)
            #expect(master.contains("64k/index.m3u8") && master.contains("128k/index.m3u8"))
            // A second package into the same place is refused, by name, and nothing is put.
            let refused = #expect(throws: PipelineError.self) { try Packaging.hls(wav, to: store) }
            #expect("\(refused.map(String.init(describing:)) ?? "")".contains("already holds a package (master.m3u8)"))
            #expect(MemoryBuckets.shared.bucket(bucket).log.count == held.log.count)
            // DASH beside HLS: the MPD after every init segment it names, the master playlist too.
            let dashBucket = bucket + "-dash"
            _ = try Packaging.hls(wav, to: try DestinationRegistry.withMemory.store(for: "mem://\(dashBucket)"),
                                  options: .init(segmentDuration: 2, bitrates: [64_000, 128_000], dash: true))
            let dashPuts = MemoryBuckets.shared.bucket(dashBucket).log
            let lastMedia = try #require(dashPuts.lastIndex { $0.hasSuffix(".mp4") || $0.hasSuffix(".m4s") })
            #expect(dashPuts.firstIndex { $0.hasSuffix(".mpd") || $0.hasSuffix(".m3u8") }.map { $0 > lastMedia } == true, "\(dashPuts)")
            // A store that fails part-way: what was put is removed, newest first, and the error says why.
            let failing = bucket + "-failing"
            let failed = #expect(throws: PipelineError.self) {
                try Packaging.hls(wav, to: try DestinationRegistry.withMemory.store(for: "mem://\(failing)?failAt=4"),
                                  options: .init(segmentDuration: 2, bitrates: [64_000, 128_000]))
            }
            #expect("\(failed.map(String.init(describing:)) ?? "")".contains("went away at put 4"))
            let rolledBack = MemoryBuckets.shared.bucket(failing)
            #expect(rolledBack.objects.isEmpty && rolledBack.log.count == 6, "\(rolledBack.log)")
            #expect(rolledBack.log.suffix(3) == rolledBack.log.prefix(3).reversed().map { "remove " + $0.dropFirst("put ".count) })
            // A scheme no store claims is refused in words.
            do {
                _ = try DestinationRegistry.standard.store(for: "mem://\(bucket)")
                Issue.record("mem:// was taken without its store registered")
            } catch {
                #expect("\(error)".contains("mem://: no object store is registered"), "\(error)")
            }
            #expect(throws: PipelineError.self) { try store.put("../escape", []) }
        }
    }

    @Test("a registered protocol takes a registered codec's packets, copied from a registered container")
    func publishShaped() throws {
        let name = "counter-\(UUID().uuidString)"
        let destination = try PublishingDestination.parse("null://\(name)?key=secret", registry: .withNull)
        #expect(destination.maskedURL == "null://\(name)?key=****")
        #expect(destination.scheme == .null)
        #expect {
            _ = try PublishingDestination.parse("null://counter")
        } throws: { error in
            "\(error)".contains("unknown scheme null://")
        }
        try inDirectory { directory in
            let wav = directory.appending("in.wav"), rev = directory.appending("in.rev")
            _ = try writeWAV(wav, frames: 10_000)
            var encoding = Transcode.EncodeOptions()
            encoding.codec = .reversedPCM
            encoding.codecs = .withReversedPCM
            encoding.formats = Self.formats
            _ = try Transcode.encode(try AudioFileInput(path: wav), to: rev, options: encoding)

            var options = LivePublication.Options(input: rev, destinations: [destination])
            options.realTime = false
            options.formats = Self.formats
            let summary = try LivePublication(options: options).run()
            #expect(summary.copied)
            #expect(summary.destinations.first?.framesSent == 10)
            let received = NullReception.byName.withLock { $0[name] }
            #expect(received == NullReception(codec: .reversedPCM, frames: 10, bytes: 40_000, lastTimestamp: 9 * 1024, finished: true))

            // A protocol that carries AAC alone gets the input decoded (by the registered
            // decoder) and encoded as AAC instead.
            let aacName = "aac-\(UUID().uuidString)"
            let aacOnly = try PublishingDestination.parse("aaconly://\(aacName)", registry: .withNull)
            var encoded = LivePublication.Options(input: rev, destinations: [aacOnly])
            encoded.realTime = false
            encoded.formats = Self.formats
            let second = try LivePublication(options: encoded).run()
            #expect(!second.copied)
            let reception = NullReception.byName.withLock { $0[aacName] }
            #expect(reception?.codec == .aac)
            #expect((reception?.frames ?? 0) >= 10, "10,000 frames of AAC: at least 10 packets")
            #expect(reception?.finished == true)
        }
    }
}
