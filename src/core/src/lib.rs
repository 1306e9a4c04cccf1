//! Pure core of the tool host: resolved forms, tool plans, input reading, previews and outcome classes.
