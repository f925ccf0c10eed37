// Package ara is the arithmetic of the event-level reports of Chrome's
// Attribution Reporting API (ARA), exact: how many output states k an
// attribution source's configuration has, the probability
// p = k/(k + e^ε − 1) with which the browser replaces the source's true
// output by one drawn uniformly from all k (k-ary randomized response over
// the state space), the information gain in bits (the capacity of the
// k-ary symmetric channel that makes), and the limits Chromium refuses a
// source registration beyond (Limits, Chromium).
//
// The counting and the formulas are those of WICG/attribution-reporting-api's
// flexible-event/flexible_event_privacy.py (and the spec's "compute the
// channel capacity of a source"), recomputed here: k as an exact integer
// (math/big), p and the capacity in float64 from ln k, stable at every
// k ≥ 1 and ε > 0 (see channel.go). A configuration is a Config — the
// shorthand Uniform(T, W, R) of T trigger-data values, W reporting windows
// and at most R reports, Chromium's defaults (Default), or a flexible-event
// registration read from its JSON (ParseRegistration).
//
// Chromium's defaults at its ε = 14: a navigation source (8
// trigger-data values, 3 windows, 3 reports) has k = C(27, 3) = 2,925
// states, p = 0.24263% and 11.46 bits; an event source (2 values, 1
// window, 1 report) k = 3, p ≈ 2.49×10⁻⁶ and 1.58 bits.
//
// Space numbers the states of a uniform source so that the conversion
// outcomes of one report or none are its first states (pets' ara_event
// releases a state and projects it onto them). For summary reports the
// package holds the contribution budget and ε range of the aggregation
// service (ContributionBudget, MaxSummaryEpsilon) and Noise Lab's RMSRE_t
// (RMSRE, ExpectedRMSRESquared).
//
// ara imports nothing of this module: it sits on the bottom floor, under
// pets.
package ara
