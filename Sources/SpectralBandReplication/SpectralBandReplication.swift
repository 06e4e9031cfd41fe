/// The SBR encoder of HE-AAC (ISO/IEC 14496-3, 4.6.18 gives the decoder it must satisfy; 3GPP
/// TS 26.404 describes an encoder): the 64-band complex QMF analysis at the output rate, the
/// half-band decimator that feeds the AAC-LC core at half the rate, and the estimation of the
/// time/frequency grid, envelopes, noise floors and inverse-filtering levels that the
/// AACBitstream SBR syntax carries.
public enum SpectralBandReplication {}
