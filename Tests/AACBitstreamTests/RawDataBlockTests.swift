@testable import AACBitstream
import FuzzTargets
import Foundation
import MediaCore
import MP4
import Testing
import TestSupport

/// `RawDataBlock` (ISO/IEC 14496-3, 4.4.2.1): every frame of ffmpeg-made AAC-LC and of the
/// corpus parses to its last bit and writes back to the same bytes; inserted fill elements keep
/// FFmpeg's decode; hostile bytes give typed errors.
@Suite(.blocking) struct RawDataBlockTests {
    /// One frame of an ADTS stream: its configuration, header and raw data block.
    struct ADTSPiece {
        var configuration: RawDataBlock.Configuration
        var header: [UInt8]
        var payload: [UInt8]
        var blocks: Int
    }

    /// What the frames of one file held.
    struct Census {
        var frames = 0
        var eightShort = 0
        var codebooks = Set<UInt8>()
        var pulses = 0
        var tns = 0
        var msMask = 0
        var elements = [UInt8: Int]()
    }

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/corpus").standardizedFileURL

    static let transientSignal = "aevalsrc='0.3*sin(2*PI*440*t)+0.1*sin(2*PI*5500*t)+0.05*(2*random(0)-1)+0.6*(2*random(0)-1)*lt(mod(t,0.25),0.004)'"

    /// name, rate, channel layout, bitrate, extra encoder options.
    static let encodings: [(String, Int, String, String, [String])] = [
        ("mono 44.1k 64k twoloop", 44100, "mono", "64k", ["-aac_coder", "twoloop"]),
        ("mono 22.05k 24k", 22050, "mono", "24k", []),
        ("stereo 48k 128k", 48000, "stereo", "128k", []),
        ("stereo 44.1k 256k fast", 44100, "stereo", "256k", ["-aac_coder", "fast"]),
        ("stereo 22.05k 32k pns is", 22050, "stereo", "32k", ["-aac_pns", "1", "-aac_is", "1"]),
        ("stereo 44.1k 48k pns is ms", 44100, "stereo", "48k", ["-aac_pns", "1", "-aac_is", "1", "-aac_ms", "1"]),
        ("stereo 48k 96k tns", 48000, "stereo", "96k", ["-aac_tns", "1"]),
        ("stereo 48k 96k no tools", 48000, "stereo", "96k", ["-aac_tns", "0", "-aac_pns", "0", "-aac_is", "0"]),
        ("5.1 48k 384k", 48000, "5.1", "384k", []),
        ("5.1 44.1k 160k fast", 44100, "5.1", "160k", ["-aac_coder", "fast"]),
        ("stereo 8k 16k", 8000, "stereo", "16k", []),
        ("mono 96k 64k", 96000, "mono", "64k", []),
    ]

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rdb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.featureUnsupported) }
        return data
    }

    /// AAC-LC in ADTS made by ffmpeg from a signal with clicks (short windows).
    static func encode(rate: Int, layout: String, bitrate: String, options: [String], seconds: Double = 3) throws -> [UInt8] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("out.aac").path
        try run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "\(transientSignal):s=\(rate):d=\(seconds)",
                           "-af", "aformat=channel_layouts=\(layout)", "-c:a", "aac", "-b:a", bitrate] + options + ["-f", "adts", path])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func adtsPieces(_ data: [UInt8]) -> [ADTSPiece] {
        var pieces: [ADTSPiece] = []
        var offset = 0
        // Skip anything before the first syncword (an ID3 tag).
        while offset + 1 < data.count, !(data[offset] == 0xFF && data[offset + 1] & 0xF6 == 0xF0) { offset += 1 }
        while offset + 10 <= data.count {
            if data[offset] == 0x49, data[offset + 1] == 0x44, data[offset + 2] == 0x33 {
                // An ID3v2 tag between frames: 10 bytes, a syncsafe size, a footer when flagged.
                let size = data[offset + 6 ..< offset + 10].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
                offset += 10 + size + (data[offset + 5] & 0x10 != 0 ? 10 : 0)
                continue
            }
            guard data[offset] == 0xFF, data[offset + 1] & 0xF6 == 0xF0 else { break }
            let length = Int(data[offset + 3] & 3) << 11 | Int(data[offset + 4]) << 3 | Int(data[offset + 5] >> 5)
            let headerLength = data[offset + 1] & 1 == 1 ? 7 : 9
            guard length >= headerLength, offset + length <= data.count else { break }
            let configuration = RawDataBlock.Configuration(
                objectType: AudioObjectType(rawValue: (data[offset + 2] >> 6) + 1),
                samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: (data[offset + 2] >> 2) & 0xF),
                channelConfiguration: (data[offset + 2] & 1) << 2 | data[offset + 3] >> 6)
            pieces.append(ADTSPiece(configuration: configuration, header: Array(data[offset ..< offset + headerLength]),
                                    payload: Array(data[offset + headerLength ..< offset + length]), blocks: Int(data[offset + 6] & 3) + 1))
            offset += length
        }
        return pieces
    }

    /// Parses `payload` to its last bit and checks it writes back; returns the block.
    @discardableResult
    static func roundTrip(_ payload: [UInt8], _ configuration: RawDataBlock.Configuration, census: inout Census,
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> RawDataBlock {
        let block = try RawDataBlock(parsing: payload, configuration: configuration)
        #expect(block.trailingBytes.isEmpty, sourceLocation: sourceLocation)
        #expect(block.alignmentBits.isAllZero, sourceLocation: sourceLocation)
        #expect(try block.serialized() == payload, sourceLocation: sourceLocation)
        #expect(try block.elementBitRanges() == block.parsedBitRanges, sourceLocation: sourceLocation)
        // The block ends with ID_END right after the last element, then fewer than 8 padding bits.
        let end = (block.parsedBitRanges.last?.upperBound ?? 0) + 3
        #expect(end <= payload.count * 8 && payload.count * 8 - end < 8, sourceLocation: sourceLocation)
        census.frames += 1
        for element in block.elements {
            census.elements[element.identifier, default: 0] += 1
            var streams: [IndividualChannelStream] = []
            switch element {
            case .singleChannel(let single), .lowFrequencyEffects(let single): streams = [single.stream]
            case .channelPair(let pair):
                streams = [pair.first, pair.second]
                if pair.msMaskPresent != 0 { census.msMask += 1 }
            default: break
            }
            for stream in streams {
                if stream.info.isEightShort { census.eightShort += 1 }
                census.codebooks.formUnion(stream.bandCodebooks)
                if stream.pulse != nil { census.pulses += 1 }
                if stream.tns != nil { census.tns += 1 }
            }
        }
        return block
    }

    @Test func huffmanCodebooksArePrefixFreeAndComplete() {
        let sizes = [81, 81, 81, 81, 81, 81, 64, 64, 169, 169, 289]
        for (index, book) in ([HuffmanCodebook.scaleFactor] + HuffmanCodebook.spectral).enumerated() {
            #expect(book.codes.count == (index == 0 ? 121 : sizes[index - 1]))
            // Kraft: the sum of 2^-length is exactly 1 (in units of 2^-32).
            let kraft = zip(book.codes, book.lengths).reduce(UInt64(0)) { $0 + (UInt64(1) << UInt64(32 - Int($1.1))) }
            #expect(kraft == 1 << 32, "codebook \(index) Kraft sum")
            // Prefix-free: no codeword, left-aligned, starts another.
            let words = zip(book.codes, book.lengths).map { (UInt64($0.0) << UInt64(32 - Int($0.1)), Int($0.1)) }.sorted { $0.0 < $1.0 }
            for (a, b) in zip(words, words.dropFirst()) {
                #expect(b.0 >> UInt64(32 - a.1) != a.0 >> UInt64(32 - a.1), "codebook \(index) is not prefix-free")
            }
            // Each index decodes back to itself.
            for symbol in book.codes.indices {
                var writer = BitWriter()
                #expect(throws: Never.self) { try book.encode(symbol, to: &writer, structure: "test") }
                var reader = BitReader(writer.bytes)
                #expect((try? book.decode(from: &reader, structure: "test")) == symbol)
            }
        }
    }

    @Test(arguments: RawDataBlockTests.encodings.indices)
    func ffmpegFramesRoundTrip(_ which: Int) throws {
        let (name, rate, layout, bitrate, options) = Self.encodings[which]
        let pieces = Self.adtsPieces(try Self.encode(rate: rate, layout: layout, bitrate: bitrate, options: options))
        var census = Census()
        for piece in pieces { try Self.roundTrip(piece.payload, piece.configuration, census: &census) }
        #expect(census.frames > 10)
        #expect(census.eightShort > 0, "\(name): no short windows")
        print("rdb \(name): \(census.frames) frames, \(census.eightShort) short-window streams, codebooks \(census.codebooks.sorted()), pulses \(census.pulses), tns \(census.tns), ms \(census.msMask), elements \(census.elements.sorted { $0.key < $1.key })")
        if layout == "5.1" { #expect(census.elements[3] == census.frames, "one LFE per frame") }
    }

    @Test func ffmpegOutputCoversTheSyntax() throws {
        // Over all encodings together: every spectral codebook, noise, intensity, pulse, TNS, M/S.
        var census = Census()
        for (_, rate, layout, bitrate, options) in Self.encodings {
            for piece in Self.adtsPieces(try Self.encode(rate: rate, layout: layout, bitrate: bitrate, options: options, seconds: 1.5)) {
                try Self.roundTrip(piece.payload, piece.configuration, census: &census)
            }
        }
        print("rdb all encodings: codebooks \(census.codebooks.sorted()), pulses \(census.pulses), tns \(census.tns), ms \(census.msMask)")
        #expect(Set(1...11).isSubset(of: Set(census.codebooks.map(Int.init))))
        #expect(census.codebooks.contains(Section.noiseCodebook))
        #expect(census.codebooks.contains(Section.intensityCodebook) || census.codebooks.contains(Section.intensityCodebook2))
        #expect(census.tns > 0)
        #expect(census.msMask > 0)
    }

    @Test func corpusADTSFramesRoundTrip() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.appendingPathComponent("androidx-media").path)
            .filter { $0.hasSuffix(".aac") || $0.hasSuffix(".adts") }.sorted()
        #expect(!names.isEmpty)
        var total = 0
        for name in names {
            let data = [UInt8](try Data(contentsOf: Self.corpus.appendingPathComponent("androidx-media/\(name)")))
            var census = Census()
            for piece in Self.adtsPieces(data) where piece.blocks == 1 {
                // aac_bbb_1ch_8kHz_aac_lc.aac says profile 2 (SSR) in its headers but holds
                // libavcodec's LC frames, as ffprobe and FFmpeg's decode of it show: SSR's
                // raw_data_block syntax is LC's plus gain control, which is refused if present.
                var configuration = piece.configuration
                if configuration.objectType == .aacSSR { configuration.objectType = .aacLC }
                try Self.roundTrip(piece.payload, configuration, census: &census)
            }
            print("rdb corpus \(name): \(census.frames) frames, codebooks \(census.codebooks.sorted())")
            #expect(census.frames > 0, "\(name)")
            total += census.frames
        }
        print("rdb corpus ADTS: \(total) frames")
    }

    /// The AAC-LC samples of an MP4 read from `source`: how many round-tripped, or `nil` when
    /// it has no AAC-LC track.
    static func mp4RoundTrip<Source: RandomAccessByteSource>(_ source: Source, name: String) throws -> Int? {
        let demuxer = MP4Demuxer(source: source, configuration: DemuxerConfiguration(mediaTypes: .audio))
        let first: MediaSample?
        do {
            try demuxer.start()
            first = try demuxer.nextAudioSample()
        } catch {
            print("rdb corpus \(name): \(error)")
            return nil
        }
        guard let track = demuxer.audioTrack, let config = try? track.audioSpecificConfig(),
              config.audioObjectType == .aacLC, config.explicitExtension == nil else {
            print("rdb corpus \(name): no AAC-LC track")
            return nil
        }
        let configuration = RawDataBlock.Configuration(samplingFrequencyIndex: config.samplingFrequencyIndex,
                                                       channelConfiguration: config.channelConfiguration)
        var census = Census()
        var sample: MediaSample? = first
        while let current = sample {
            try roundTrip(current.data, configuration, census: &census)
            sample = try demuxer.nextAudioSample()
        }
        print("rdb corpus \(name): \(census.frames) samples, codebooks \(census.codebooks.sorted())")
        return census.frames
    }

    @Test func corpusMP4SamplesRoundTrip() throws {
        let folder = Self.corpus.appendingPathComponent("androidx-media")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        var total = 0
        for name in names where name.hasSuffix(".mp4") || name.hasSuffix(".m4a") {
            let source = try FileByteSource(path: .init(folder.appendingPathComponent(name).path))
            total += try Self.mp4RoundTrip(source, name: name) ?? 0
        }
        // CMAF: the init segment, then its media segments.
        let segments = names.filter { $0.hasPrefix("cmaf_multi-segment_audio_") && $0.hasSuffix(".m4s") }
        if names.contains("cmaf_multi-segment_audio_init.mp4"), !segments.isEmpty {
            let parts = try (["cmaf_multi-segment_audio_init.mp4"] + segments).map {
                try FileByteSource(path: .init(folder.appendingPathComponent($0).path))
            }
            let samples = try Self.mp4RoundTrip(ConcatenatedByteSource(parts), name: "cmaf_multi-segment_audio (init + \(segments.count) segments)")
            #expect((samples ?? 0) > 0)
            total += samples ?? 0
        }
        print("rdb corpus MP4: \(total) samples")
        #expect(total > 1000)
    }

    /// A fill element after each SCE and CPE: FFmpeg decodes the frames to the same PCM.
    @Test(arguments: ["mono", "stereo", "5.1"])
    func insertedFillElementsKeepFFmpegsDecode(_ layout: String) throws {
        let original = try Self.encode(rate: 48000, layout: layout, bitrate: "128k", options: [], seconds: 1)
        var modified: [UInt8] = []
        var inserted = 0
        for (index, piece) in Self.adtsPieces(original).enumerated() {
            var block = try RawDataBlock(parsing: piece.payload, configuration: piece.configuration)
            // EXT_FILL in even frames, EXT_DATA_ELEMENT with a 20-byte payload (escaped count) in odd ones.
            let fill = index % 2 == 0
                ? try FillElement(extensionType: FillElement.ExtensionType.fill)
                : try FillElement(extensionType: FillElement.ExtensionType.dataElement, bits: BitString(bytes: [UInt8](repeating: 0x5A, count: 20)))
            for position in block.elements.indices.reversed() where block.elements[position].isAudioChannelElement {
                try block.insert(.fill(fill), after: position)
                inserted += 1
            }
            let payload = try block.serialized()
            let reread = try RawDataBlock(parsing: payload, configuration: piece.configuration)
            #expect(reread.elements == block.elements)
            var header = piece.header
            let length = header.count + payload.count
            header[3] = header[3] & 0xFC | UInt8(length >> 11)
            header[4] = UInt8((length >> 3) & 0xFF)
            header[5] = header[5] & 0x1F | UInt8((length & 7) << 5)
            modified += header + payload
        }
        #expect(inserted > 0)
        #expect(modified.count > original.count)
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func decode(_ bytes: [UInt8], _ name: String) throws -> Data {
            let path = directory.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "aac", "-i", path, "-f", "f32le", "-"])
        }
        let before = try decode(original, "a.aac")
        let after = try decode(modified, "b.aac")
        #expect(!before.isEmpty)
        #expect(before == after)
    }

    /// An empty `EXT_SBR_DATA` fill element after each SCE/CPE: structure only (FFmpeg would
    /// start SBR decoding on it).
    @Test func sbrFillElementInsertion() throws {
        let pieces = Self.adtsPieces(try Self.encode(rate: 48000, layout: "5.1", bitrate: "256k", options: [], seconds: 0.5))
        for piece in pieces {
            let block = try RawDataBlock(parsing: piece.payload, configuration: piece.configuration)
            var extended = block
            let sbr = try FillElement(extensionType: FillElement.ExtensionType.sbrData, bits: BitString(bytes: [0xAB, 0xCD]))
            #expect(sbr.payload == [0xDA, 0xBC, 0xD0])
            for position in block.elements.indices.reversed() where block.elements[position].isAudioChannelElement {
                try extended.insert(.fill(sbr), after: position)
            }
            let written = try extended.serialized()
            let reread = try RawDataBlock(parsing: written, configuration: piece.configuration)
            #expect(reread.elements == extended.elements)
            #expect(try reread.elementBitRanges() == reread.parsedBitRanges)
            // Each SCE/CPE is now followed by the SBR element: 3 + 4 + 24 bits.
            for (position, element) in reread.elements.enumerated() where element.isAudioChannelElement {
                #expect(reread.elements[position + 1] == .fill(sbr))
                #expect(reread.parsedBitRanges[position + 1].count == 31)
            }
            #expect(reread.elements.filter { !($0 == .fill(sbr)) } == block.elements)
        }
        #expect(throws: AACBitstreamError.self) { try FillElement(payload: [UInt8](repeating: 0, count: 270)) }
    }

    @Test func hostileBlocksGiveTypedErrors() throws {
        let configuration = RawDataBlock.Configuration(samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 3), channelConfiguration: 2)
        func error(_ bits: String) -> AACBitstreamError? {
            var writer = BitWriter()
            for character in bits where character != " " { writer.writeFlag(character == "1") }
            writer.alignToByte()
            do {
                _ = try RawDataBlock(parsing: writer.bytes, configuration: configuration)
                return nil
            } catch {
                return error
            }
        }
        func field(_ error: AACBitstreamError?) -> String? {
            if case .invalidField(_, let field, _, _, _) = error { return field }
            return nil
        }
        // CCE
        #expect(field(error("010 0000 0000")) == "id_syn_ele")
        // SCE, gain, ics_info long with predictor_data_present
        #expect(field(error("000 0000 10000000 0 00 0 000000 1")) == "predictor_data_present")
        // max_sfb 50 > 49 at 48 kHz
        #expect(field(error("000 0000 10000000 0 00 0 110010 0")) == "max_sfb")
        // sect_cb 12
        #expect(field(error("000 0000 10000000 0 00 0 000001 0 1100 00001")) == "sect_cb")
        // max_sfb 0: no sections; no pulse, no TNS, gain control
        #expect(field(error("000 0000 10000000 0 00 0 000000 0 0 0 1")) == "gain_control_data_present")
        // the same without gain control, then END: a valid silent frame
        #expect(error("000 0000 10000000 0 00 0 000000 0 0 0 0 111") == nil)
        // ms_mask_present 3
        #expect(field(error("001 0000 1 0 00 0 000000 0 11")) == "ms_mask_present")
        // pulse data in eight short windows
        #expect(field(error("000 0000 10000000 0 10 0 0000 0000000 1")) == "pulse_data_present")
        // no END
        if case .truncated = error("000 0000 10000000 0 00 0 000000 0 0 0 0") {} else { Issue.record("expected truncated") }
        // HE-AAC / Main object types are refused at the configuration
        let main = RawDataBlock.Configuration(objectType: .aacMain, samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 3), channelConfiguration: 2)
        #expect(throws: AACBitstreamError.self) { try RawDataBlock(parsing: [0xE0], configuration: main) }
    }

    /// Truncations and bit flips of real frames: a typed error or a block that writes back.
    @Test func damagedFramesNeverTrap() throws {
        let pieces = Self.adtsPieces(try Self.encode(rate: 44100, layout: "stereo", bitrate: "96k", options: [], seconds: 0.5))
        var random = UInt64(0x9E37_79B9_7F4A_7C15)
        func next() -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: random >> 33)
        }
        for piece in pieces.prefix(12) {
            for cut in stride(from: 0, to: piece.payload.count, by: max(1, piece.payload.count / 40)) {
                FuzzTarget.rdb.run([piece.header[2] >> 2 & 0xF | 0x20] + piece.payload.prefix(cut))
            }
            for _ in 0..<60 {
                var damaged = piece.payload
                let bit = next() % (damaged.count * 8)
                damaged[bit / 8] ^= UInt8(0x80) >> UInt8(bit % 8)
                FuzzTarget.rdb.run([piece.header[2] >> 2 & 0xF | 0x20] + damaged)
            }
        }
    }
}

/// Elements and tools ffmpeg's encoder never writes (pulse data, data stream and program config
/// elements, escaped counts): built, written, read back to the same values.
@Suite(.blocking) struct RawDataBlockWriterTests {
    static let configuration = RawDataBlock.Configuration(samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 4), channelConfiguration: 1)

    static func reread(_ block: RawDataBlock) throws -> RawDataBlock {
        let bytes = try block.serialized()
        let parsed = try RawDataBlock(parsing: bytes, configuration: block.configuration)
        #expect(try parsed.serialized() == bytes)
        #expect(try parsed.elementBitRanges() == parsed.parsedBitRanges)
        return parsed
    }

    static func stream(pulse: PulseData?) -> IndividualChannelStream {
        // Long window, 4 bands at 44.1 kHz (0..<16): book 11 with escapes, book 1, zero, book 5.
        var coefficients = [Int16](repeating: 0, count: 1024)
        coefficients[0] = 16
        coefficients[1] = -8191
        coefficients[2] = 300
        coefficients[3] = -15
        coefficients[4] = 1
        coefficients[6] = -1
        coefficients[12] = 4
        coefficients[15] = -3
        let info = ChannelStreamInfo(windowSequence: .onlyLong, windowShape: 1, maxSFB: 4)
        return IndividualChannelStream(
            globalGain: 100, info: info,
            sections: [[Section(codebook: 11, length: 1), Section(codebook: 1, length: 1), Section(codebook: 0, length: 1), Section(codebook: 5, length: 1)]],
            scaleFactors: [100, 98, 0, 150], pulse: pulse,
            tns: TNSData(windows: [TNSData.Window(coefficientResolution: 1, filters: [
                TNSData.Filter(length: 20, direction: true, coefficientCompress: 0, coefficients: [1, 15, 0, 7]),
                TNSData.Filter(length: 5, direction: false, coefficientCompress: 0, coefficients: []),
            ])]),
            coefficients: coefficients)
    }

    @Test func toolsFFmpegDoesNotWriteReadBack() throws {
        let single = SingleChannelElement(tag: 3, stream: Self.stream(pulse: PulseData(startBand: 2, offsets: [0, 31, 4], amplitudes: [15, 1, 7])))
        let pce = ProgramConfigElement(samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 4),
                                       front: [.init(isChannelPair: false, tag: 3)], comment: Array("KeyFrameKit".utf8))
        let block = RawDataBlock(configuration: Self.configuration, elements: [
            .programConfig(pce),
            .dataStream(DataStreamElement(tag: 1, byteAligned: true, data: [UInt8](repeating: 0xC3, count: 300))),
            .dataStream(DataStreamElement(tag: 2, byteAligned: false, data: [1, 2, 3])),
            .singleChannel(single),
            .fill(FillElement(escapedCount: true, payload: [UInt8](repeating: 0xA5, count: 14))),
            .fill(try FillElement(payload: [UInt8](repeating: 0x0F, count: 14))),
            .fill(try FillElement(payload: [UInt8](repeating: 0x11, count: 269))),
        ])
        let parsed = try Self.reread(block)
        // The PCE keeps the alignment bits it read (written anew as zeros).
        guard case .programConfig(var readPCE) = parsed.elements[0] else { Issue.record("no PCE"); return }
        #expect(readPCE.alignmentBits.isAllZero)
        readPCE.alignmentBits = BitString()
        #expect(readPCE == pce)
        #expect(Array(parsed.elements.dropFirst()) == Array(block.elements.dropFirst()))
        #expect(parsed.parsedBitRanges[5].count == 3 + 4 + 14 * 8)
        #expect(parsed.parsedBitRanges[4].count == 3 + 4 + 8 + 14 * 8)
    }

    @Test func eightShortWindowsWithGroupsAndMSReadBack() throws {
        // Groups 3, 1, 4 (grouping bits 1100111 → windows 0-2, 3, 4-7), 2 bands each.
        let info = ChannelStreamInfo(windowSequence: .eightShort, windowShape: 0, maxSFB: 2, scaleFactorGrouping: 0b1100111)
        #expect(info.windowGroupLengths == [3, 1, 4])
        var coefficients = [Int16](repeating: 0, count: 1024)
        for window in 0..<8 { coefficients[window * 128 + 1] = Int16(window % 3) - 1; coefficients[window * 128 + 5] = Int16(window) }
        // Group 0: book 2, book 7. Group 1: noise, intensity. Group 2: book 8 over both bands.
        let first = IndividualChannelStream(
            globalGain: 120, info: info,
            sections: [[Section(codebook: 2, length: 1), Section(codebook: 7, length: 1)],
                       [Section(codebook: 13, length: 1), Section(codebook: 15, length: 1)],
                       [Section(codebook: 8, length: 2)]],
            scaleFactors: [110, 111, 30, -5, 111, 112],
            tns: TNSData(windows: (0..<8).map { window in
                TNSData.Window(coefficientResolution: window == 3 ? 0 : UInt8(window & 1), filters: window == 3 ? [] : [TNSData.Filter(length: 9, direction: false, coefficientCompress: 1, coefficients: [1, 2, 3, 0, 1, 2, 3])])
            }),
            coefficients: coefficients.enumerated().map { index, value in index / 128 == 3 && index % 128 < 8 ? 0 : value })
        var second = first
        second.globalGain = 90
        let pair = ChannelPairElement(tag: 0, commonWindow: true, msMaskPresent: 1, msUsed: [true, false, false, true, true, true],
                                      first: first, second: second)
        let block = RawDataBlock(configuration: Self.configuration, elements: [.channelPair(pair), .lowFrequencyEffects(SingleChannelElement(tag: 0, stream: Self.stream(pulse: nil)))])
        let parsed = try Self.reread(block)
        guard case .channelPair(let readPair) = parsed.elements[0] else { Issue.record("no CPE"); return }
        for (read, written) in [(readPair.first, first), (readPair.second, second)] {
            #expect(read.info == written.info)
            #expect(read.sections == written.sections)
            #expect(read.scaleFactors == written.scaleFactors)
            #expect(read.tns == written.tns)
            #expect(read.coefficients == written.coefficients, "\(zip(read.coefficients, written.coefficients).enumerated().filter { $0.1.0 != $0.1.1 }.prefix(4))")
        }
        #expect(readPair.msUsed == pair.msUsed)
        #expect(parsed.elements[1] == block.elements[1])
    }

    @Test func unrepresentableValuesAreTypedErrors() throws {
        var stream = Self.stream(pulse: nil)
        stream.coefficients[4] = 2   // book 1 holds ±1 only
        let block = RawDataBlock(configuration: Self.configuration, elements: [.singleChannel(SingleChannelElement(tag: 0, stream: stream))])
        #expect(throws: AACBitstreamError.self) { try block.serialized() }
        var jump = Self.stream(pulse: nil)
        jump.scaleFactors[3] = 255   // a delta of 155 has no codeword
        let jumping = RawDataBlock(configuration: Self.configuration, elements: [.singleChannel(SingleChannelElement(tag: 0, stream: jump))])
        #expect(throws: AACBitstreamError.self) { try jumping.serialized() }
        var empty = RawDataBlock(configuration: Self.configuration, elements: [])
        #expect(throws: AACBitstreamError.self) { try empty.insert(.fill(try FillElement(payload: [])), after: 0) }
        try empty.insert(.fill(try FillElement(payload: [])), after: -1)
        #expect(try empty.serialized() == [0b1100_0001, 0b1100_0000])
    }
}
