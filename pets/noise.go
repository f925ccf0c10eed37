package pets

// Noise says how a release's randomness (bags and noise) was drawn.
type Noise string

// The noise kinds of a release.
const (
	NoiseSecure     Noise = "secure"            // crypto/rand (NewSecureRand)
	NoiseSeeded     Noise = "seeded"            // explicit seed: reproducible, and undone by whoever learns the seed
	NoiseSimulation Noise = "seeded-simulation" // seeded from a config inside a measurement run
)

// Valid reports whether n is one of the declared noise kinds.
func (n Noise) Valid() bool { return n == NoiseSecure || n == NoiseSeeded || n == NoiseSimulation }
