package dev.ratelimit.spring.boot.reactiveapp;

import dev.ratelimit.spring.boot.OptionsScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The WebFlux application in shadow mode, with OpenAI's headers instead of the classic family. */
@SpringBootTest(
        classes = ReactiveTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.main.web-application-type=reactive",
            OptionsScenarios.SHADOW_MODE,
            OptionsScenarios.IETF_AND_OPENAI_HEADERS
        })
class ReactiveOptionsTest extends OptionsScenarios {}
