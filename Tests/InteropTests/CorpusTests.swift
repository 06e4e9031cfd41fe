import AACBitstream
import Foundation
import MediaCore
import SystemPackage
import Testing
import TestSupport

/// Real-world files that nobody on this project made: `../shared/corpus/` (next to the
/// repository), read where they lie. When the folder is absent the suite fails and says so:
/// it did not run.
@Suite(.blocking) struct CorpusTests {
    static let folder: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/corpus/androidx-media").standardizedFileURL

    static func corpusFile(_ name: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw ExternalTool.ToolFailure(description: "corpus file \(path) not found: the corpus suite did not run (../shared/corpus must sit beside the repository)")
        }
        return path
    }

    static let adtsFiles = ["aac_sine.aac", "aac_bbb_1ch_8kHz_aac_lc.aac", "ts_sample.adts", "ts_sample_cbs_truncated.adts", "ts_sample_with_id3.adts"]

    @Test func corpusFolderIsPresent() {
        #expect(FileManager.default.fileExists(atPath: Self.folder.path),
                "corpus folder \(Self.folder.path) is absent: the corpus suite did not run")
    }

    @Test(arguments: adtsFiles)
    func adtsFileProbesRight(name: String) throws {
        let file = try Self.corpusFile(name)
        let peer = try ExternalTool.ffprobeAudio(file)
        let ours = try ExternalTool.probeJSON(file)
        let track = try #require((ours["tracks"] as? [[String: Any]])?.first)
        #expect(track["sampleRate"] as? Int == peer.sampleRate)
        #expect(track["channels"] as? Int == peer.channels)
        #expect(track["profile"] as? String == peer.profile)
        let damage = ours["damage"] as? [String] ?? []
        switch name {
        case "ts_sample_cbs_truncated.adts":
            // ffprobe counts the cut-off last frame as a packet; we report it and do not deliver it.
            #expect(track["sampleCount"] as? Int == peer.packets - 1)
            #expect(ours["damageCount"] as? Int == 1)
            #expect(damage.first?.contains("truncated") == true, "\(damage)")
            #expect(damage.first?.contains("31624") == true, "the damage names its offset: \(damage)")
        case "ts_sample_with_id3.adts":
            #expect(track["sampleCount"] as? Int == peer.packets)
            #expect((ours["tagBytes"] as? Int ?? 0) > 0)
            #expect(ours["damageCount"] as? Int == 0)
            #expect(ours["bytesSkipped"] as? Int == 0)
        default:
            #expect(track["sampleCount"] as? Int == peer.packets)
            #expect(ours["damageCount"] as? Int == 0)
        }
    }

    @Test(arguments: adtsFiles)
    func everyADTSHeaderWritesBackIdentically(name: String) throws {
        let file = try Self.corpusFile(name)
        var reader = ADTSReader(source: try FileByteSource(path: FilePath(file)), chunkSize: 1000)
        var frames = 0
        while let frame = try reader.nextFrame() {
            #expect(try frame.header.serialized()[...] == frame.bytes[0..<frame.header.headerLength])
            frames += 1
        }
        #expect(frames > 0)
    }

    static let mp4Files = [
        "mp4_bbb_1ch_8kHz_aac_lc.m4a", "mp4_bbb_1ch_16kHz_aac.mp4", "mp4_sample_audio_only.mp4", "mp4_sample_audio_only_15s.mp4",
        "mp4_long_edit_list_audioonly.mp4", "mp4_sample.mp4", "mp4_sample_with_metadata.mp4", "mp4_sample_rotate_and_reflect.mp4",
        "mp4_sample_ac3_aac.mp4", "mp4_sample_fragmented.mp4", "mp4_sample_partially_fragmented.mp4",
        "cmaf_multi-segment_audio_init.mp4",
    ]

    @Test(arguments: mp4Files)
    func esdsAndAudioSpecificConfigWriteBackIdentically(name: String) throws {
        let file = try Self.corpusFile(name)
        let boxes = ESDSLocator.payloads(in: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(!boxes.isEmpty, "no esds found in \(name)")
        let peer = try ExternalTool.ffprobeAudio(file)
        for box in boxes {
            let descriptor = try ESDescriptor(esdsBoxPayload: box.payload, baseOffset: Int64(box.offset))
            #expect(try descriptor.esdsBoxPayload() == box.payload)
            let config = try #require(try descriptor.audioSpecificConfig())
            #expect(try config.serialized() == descriptor.decoderConfig.decoderSpecificInfo)
            if boxes.count == 1 {
                #expect(config.outputSampleRate == peer.sampleRate)
                #expect(config.channelCount == peer.channels)
            }
            if name == "mp4_bbb_1ch_16kHz_aac.mp4" {
                // The ASC with the 0x2B7 sync extension and sbrPresentFlag = 0.
                #expect(config.syncExtension?.objectType == .sbr)
                #expect(config.syncExtension?.sbrPresent == false)
            }
        }
    }
}
