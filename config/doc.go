// Package config is the typed configuration of a labelprivacy run and the
// one way it is read: Load layers the defaults, a YAML file (the embedded
// configs/quickstart.yaml when none is given), TRAIN_<KEY> environment
// variables and --set key=value overrides (viper holds the layers), decodes
// the merged settings strictly into Config and validates it once. Every
// error wraps ErrConfig and names the key and where its value came from
// (the file, $TRAIN_… or --set key): an unknown key with the closest known
// one, a removed key with the reason, a value of the wrong type, a
// fractional number for an integer, two keys equal up to case, a setting
// listed twice.
//
// The keys are Config's yaml tags, one per field: the same tags decode a
// file and write config.resolved.yaml (WriteResolved), which loads back to
// the same Config. Enumerated values parse themselves (UnmarshalText of
// the owning package's type: model.Kind, pets.Kind, llp.Rule …).
//
// A Config describes a grid (Section 4 and Appendix C of "Auditing Privacy
// Mechanisms via Label Inference Attacks"): settings of the `pets:` list
// (Setting, expanded k × ε × bag rule per entry) × train.learning_rates ×
// train.trials. Package pipeline runs it.
package config
