import ArgumentParser
import KeyFrameKit

/// `--coder twoloop|fast`: libavcodec's AAC scale-factor search, spelled as `ffmpeg -aac_coder`.
enum CoderArgument: String, ExpressibleByArgument, CaseIterable {
    case twoloop
    case fast

    /// The encoder's coder.
    var coder: AACEncoder.Coder {
        switch self {
        case .twoloop: .twoLoop
        case .fast: .fast
        }
    }
}
