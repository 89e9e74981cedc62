"""The machine under the components: where the bundled models live, content digests, atomic writes, memory handed back, progress lines, environment references."""
