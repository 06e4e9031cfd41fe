import ArgumentParser
import KeyFrameKit

/// A `--start`, `--end` or `--at` value: seconds (`12.5`), `H:MM:SS.mmm`, or samples (`48000s`).
struct PositionArgument: ExpressibleByArgument {
    let position: AudioEditing.Position

    init(_ position: AudioEditing.Position) { self.position = position }

    init?(argument: String) {
        guard let position = AudioEditing.Position(positionArgument: argument) else { return nil }
        self.position = position
    }

    var defaultValueDescription: String { position.description }
}
