import Testing
@testable import SpectralBandReplication
