// `keyframe`: the command line, without an HTTP server linked in (see `keyframe-serve`).
import KeyframeCommands

Keyframe.main()
