"""Studies with people: a study file, each participant's way from consent to completion code, a lobby that
forms groups, dropouts taken over by models, and the experimenter's dashboard and exports."""
